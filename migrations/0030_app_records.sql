-- why: App records (GET/POST/PUT/PATCH /app): the training parameters of an app or of one job, and the run state a trainer reports; the engine reads them through paramsForJob.
-- A record with job_id null is an app-level template; a job's own record wins over templates (newest first).
-- Zero means "engine default" for layers_requested, learning_rate, data_rows_to_consider and deviated_target.
create table app_records (
  id                    serial primary key,
  user_id               integer not null references users (id) on delete cascade,
  app_name              text not null,
  job_id                integer references jobs (id) on delete cascade,
  training_id           integer references trainings (id) on delete cascade,
  layers_requested      integer not null default 0 check (layers_requested >= 0),
  learning_rate         double precision not null default 0 check (learning_rate >= 0 and learning_rate < 1),
  request_type          smallint not null default 0 check (request_type between 0 and 2),
  data_rows_to_consider integer not null default 0 check (data_rows_to_consider >= 0),
  no_negatives          smallint not null default 0 check (no_negatives in (0, 1)),
  increase_margin       double precision not null default 0 check (increase_margin >= 0),
  decrease_margin       double precision not null default 0 check (decrease_margin >= 0),
  deviation_target      double precision not null default 10 check (deviation_target >= 0),
  deviated_target       double precision not null default 0 check (deviated_target >= 0),
  status                integer not null default 0,
  host                  text not null default '',
  pid                   integer not null default 0,
  probability           double precision check (probability between 0 and 1),
  created_at            timestamptz not null default now(),
  updated_at            timestamptz not null default now()
);
create index app_records_user_app_idx on app_records (user_id, app_name, id);
create index app_records_job_idx on app_records (job_id, id) where job_id is not null;
create index app_records_training_idx on app_records (training_id) where training_id is not null;
