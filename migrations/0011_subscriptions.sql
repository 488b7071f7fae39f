-- why: per-user subscriptions to applications, one row per subscribed period so the history survives re-subscribing.
create table subscriptions (
  id              serial primary key,
  user_id         integer not null references users (id) on delete cascade,
  application_id  integer not null references applications (id),
  plan_id         text not null references plans (id),
  subscribed_at   timestamptz not null default now(),
  unsubscribed_at timestamptz,
  updated_at      timestamptz not null default now(),
  check (unsubscribed_at is null or unsubscribed_at >= subscribed_at)
);
-- At most one open period per user and application, whatever the number of processes racing.
create unique index subscriptions_open_key on subscriptions (user_id, application_id) where unsubscribed_at is null;
create index subscriptions_user_app_idx on subscriptions (user_id, application_id, subscribed_at desc);
