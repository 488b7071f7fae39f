-- why: applications users subscribe to, each with a default plan; plans live in a table so an administrator can add one with a migration.
-- Plan ids are short stable slugs because clients store and send them (`planId`, PATCH /subscriptions `plan`).
create table plans (
  id          text primary key check (id ~ '^[a-z0-9][a-z0-9_-]{0,39}$'),
  description text not null default '',
  created_at  timestamptz not null default now()
);
insert into plans (id, description) values
  ('basic', 'Default plan: trainings and forecasts billed by consumption'),
  ('standard', 'Standard plan for regular use'),
  ('premium', 'Premium plan with priority support');

create table applications (
  id         serial primary key,
  name       text not null unique,
  plan_id    text not null references plans (id),
  created_at timestamptz not null default now()
);
insert into applications (name, plan_id) values ('forecast', 'basic');
