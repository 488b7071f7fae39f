-- why: predictions asked for with the older POST /forecasts.php (one posted row run through the job's stored network), kept per job until the data area offers a job-output writer.
create table forecast_records (
  id          bigserial primary key,
  job_id      integer not null references jobs (id) on delete cascade,
  training_id integer not null references trainings (id) on delete cascade,
  user_id     integer not null references users (id) on delete cascade,
  -- the posted row with the predicted output columns filled in, keyed by the CSV's column names
  header      jsonb not null,
  row         jsonb not null,
  created_at  timestamptz not null default now()
);
create index forecast_records_job_idx on forecast_records (job_id, id);
