-- why: log entries administrators read through GET /logs: what clients post and what the service itself notes (start, failed logins, job failures).
-- type: 4 Error, 3 Warning, 2 Normal, 1 Verbose, 0 Extra verbose.
create table logs (
  id         bigserial primary key,
  host       text not null default '',
  pid        integer not null default 0,
  procedure  text not null default '',
  type       smallint not null default 2 check (type between 0 and 4),
  text       text not null,
  user_id    integer references users (id) on delete set null,
  request_id text,
  created_at timestamptz not null default now()
);
create index logs_created_idx on logs (created_at desc);
create index logs_host_pid_idx on logs (host, pid);
