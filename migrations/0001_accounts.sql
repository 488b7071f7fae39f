-- why: users, their sessions and password-recovery tokens are the spine every other resource hangs from.
create table users (
  id            serial primary key,
  email         text not null,
  name          text not null default '',
  lastname      text not null default '',
  phone         text not null default '',
  role          text not null default 'consumer' check (role in ('admin', 'consumer')),
  is_enabled    boolean not null default true,
  password_hash text not null,
  client_id     integer,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

-- Tokens are stored only as SHA-256 hashes: a leaked table does not hand out sessions.
create table sessions (
  id           serial primary key,
  user_id      integer not null references users (id) on delete cascade,
  token_hash   text not null unique,
  created_at   timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at   timestamptz not null,
  ended_at     timestamptz
);
create index sessions_user_id_idx on sessions (user_id);

create table password_tokens (
  id         serial primary key,
  user_id    integer not null references users (id) on delete cascade,
  token_hash text not null unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at    timestamptz
);

-- Failed logins and recovery requests per e-mail, so the per-account limit holds across processes.
create table auth_attempts (
  id         bigserial primary key,
  kind       text not null,
  subject    text not null,
  created_at timestamptz not null default now()
);
create index auth_attempts_subject_idx on auth_attempts (kind, subject, created_at);
