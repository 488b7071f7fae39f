-- why: network weights per training (GET/POST/DELETE /netw): the `query` text a legacy trainer posts and the engine's trained model JSON, both kept as plain data and never executed, so a restart loses no network.
-- kind 'query': text posted to POST /netw, stored verbatim; kind 'model': TrainedModel JSON written by the engine (the newest one is used to predict).
create table network_weights (
  id          bigserial primary key,
  training_id integer not null references trainings (id) on delete cascade,
  user_id     integer not null references users (id) on delete cascade,
  kind        text not null check (kind in ('query', 'model')),
  content     text not null,
  created_at  timestamptz not null default now()
);
create index network_weights_training_idx on network_weights (training_id, kind, id);
