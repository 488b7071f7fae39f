-- why: status records (GET/POST/PATCH /stat): one per trainer run, identified on the wire by name, host and pid; the engine opens, advances and terminates one per job run.
-- status: 0 Open, 1 Finished, 2 Failed, 3 Aborted (a PATCH with terminate = N closes the record with status N).
create table stat_records (
  id            bigserial primary key,
  user_id       integer not null references users (id) on delete cascade,
  job_id        integer references jobs (id) on delete cascade,
  name          text not null,
  host          text not null,
  pid           integer not null,
  parameters    text not null default '',
  caller        text not null default '',
  text          text not null default '',
  procedure     text not null default '',
  advance       double precision not null default 0 check (advance between 0 and 100),
  status        smallint not null default 0 check (status between 0 and 3),
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  terminated_at timestamptz
);
create index stat_records_process_idx on stat_records (host, pid, name, id);
create index stat_records_job_idx on stat_records (job_id, id) where job_id is not null;
