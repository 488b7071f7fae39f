-- why: resource consumption per training run (ram MB, cpu seconds, disk MB), what an operator invoices.
-- job_id and training_id carry no foreign key: those tables come from a later migration and billing
-- records must outlive a deleted job.
create table consumptions (
  id            bigserial primary key,
  user_id       integer not null references users (id),
  job_id        integer,
  training_id   integer,
  app_name      text not null default '',
  host          text not null default '',
  pid           integer not null default 0,
  ram           double precision not null default 0 check (ram >= 0),
  cpu           double precision not null default 0 check (cpu >= 0),
  disk          double precision not null default 0 check (disk >= 0),
  date          timestamptz not null default now(),
  date_invoiced timestamptz
);
create index consumptions_user_date_idx on consumptions (user_id, date);
create index consumptions_open_idx on consumptions (date) where date_invoiced is null;
