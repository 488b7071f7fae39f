-- why: failed logins are counted per (e-mail, client address), so an attacker failing for someone's
-- e-mail from its own address exhausts only its own pair, never the owner's (issue 22).
alter table auth_attempts add column address text;
create index auth_attempts_pair_idx on auth_attempts (kind, subject, address, created_at);
