-- why: trainings (what is learned) and jobs (one run of a training over uploaded data) are the core of the model side.
-- Training status: 0 Created (no model yet), 1 Training, 2 Trained, 3 Failed.
create table trainings (
  id               serial primary key,
  user_id          integer not null references users (id) on delete cascade,
  app_name         text not null default '',
  description      text not null default '',
  status           smallint not null default 0,
  neurons          integer not null default 0,
  inputs           integer not null default 0,
  outputs          integer not null default 0,
  layers_requested integer not null default 0,
  layers_created   integer not null default 0,
  success_rate     double precision not null default 0,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now()
);
create index trainings_user_idx on trainings (user_id, created_at);

-- Job status: 0 Created (no data yet), 1 Pending (queued), 2 Running, 3 Finished, 4 Failed, 5 Aborted.
create table jobs (
  id              serial primary key,
  user_id         integer not null references users (id) on delete cascade,
  training_id     integer not null references trainings (id) on delete cascade,
  session_id      integer,
  app_name        text not null default '',
  status          smallint not null default 0 check (status between 0 and 5),
  advance         double precision not null default 0,
  nets            text not null default '',
  error           text,
  attempts        integer not null default 0,
  abort_requested boolean not null default false,
  worker          text,
  heartbeat_at    timestamptz,
  started_at      timestamptz,
  finished_at     timestamptz,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now()
);
create index jobs_user_idx on jobs (user_id, created_at);
create index jobs_training_idx on jobs (training_id);
create index jobs_status_idx on jobs (status);
