-- why: one job's series spread over every training thread of every process on the shared database, with fair turns between users (issue 34)
-- A job in parts keeps its plan here once (the shared part every unit reads), and its units of work in
-- job_parts: the global model's rounds (stage 1) and the groups of series (stage 2, claimable once every
-- stage-1 unit of the job is done). Any training thread of any process claims a unit with SKIP LOCKED.
create table job_plans (
  job_id     integer primary key references jobs (id) on delete cascade,
  plan       text not null,
  -- the upload's header as a JSON array: the output's columns
  header     text not null,
  -- the global model's task (its series and rounds), read by each of its rounds; null without one
  global     text,
  -- the run's status record, closed by whichever process assembles the job
  stat_id    integer,
  -- the planning thread's CPU and memory peak, added to the parts' for the job's consumption record
  cpu_seconds double precision,
  peak_bytes  bigint,
  parts      integer not null,
  created_at timestamptz not null default now()
);

create table job_parts (
  job_id       integer not null references jobs (id) on delete cascade,
  part         integer not null,
  stage        smallint not null check (stage in (1, 2)),
  -- the job's user: claims alternate between owners
  owner        integer not null,
  -- 0 queued, 1 running, 2 done
  status       smallint not null default 0 check (status between 0 and 2),
  worker       text,
  attempts     integer not null default 0,
  cost         double precision not null default 0,
  task         text not null,
  outcome      text,
  cpu_seconds  double precision,
  peak_bytes   bigint,
  queued_at    timestamptz not null default now(),
  started_at   timestamptz,
  heartbeat_at timestamptz,
  finished_at  timestamptz,
  primary key (job_id, part)
);
create index job_parts_queued_idx on job_parts (status, stage, owner);

-- When each owner last had a unit of work (a job or a part) claimed: the one with the oldest turn goes next.
create table owner_turns (
  user_id       integer primary key,
  last_claim_at timestamptz not null
);
