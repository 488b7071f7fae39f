-- why: automated chat (spec 4.7): clients with their provider key, use cases (chatbot scenarios), sentences, chats.
-- The provider key is stored only AES-256-GCM encrypted (key derived from SECRET_KEY); the hint is the
-- masked form shown to administrators (`sk-...abcd`), kept so that listing never decrypts.
create table clients (
  id                 serial primary key,
  fiscal_id          text,
  company_name       text,
  company_legal_name text,
  company_address1   text,
  company_address2   text,
  company_address3   text,
  company_city       text,
  company_zip_code   text,
  provider_key_enc   text,
  provider_key_hint  text,
  created_by         integer references users (id) on delete set null,
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now()
);

-- users.client_id (0001) becomes a real reference; NOT VALID so an older database with stray values still migrates.
alter table users add constraint users_client_id_fkey foreign key (client_id) references clients (id) on delete set null not valid;
create index users_client_id_idx on users (client_id);

-- A use case is opened while finish_at is null (or in the future); `hash` changes on every update so a front end can poll.
create table usecases (
  id                     serial primary key,
  client_id              integer not null references clients (id) on delete cascade,
  user_id                integer references users (id) on delete set null,
  description            text not null default '',
  welcome                text not null default '',
  start_at               timestamptz not null default now(),
  finish_at              timestamptz,
  tokens                 integer not null default 0,
  words_for_manual       text not null default '',
  words_for_attention    text not null default '',
  timeout_for_auto_msg   integer not null default 0 check (timeout_for_auto_msg >= 0),
  auto_msg               text not null default '',
  manual_message         text not null default '',
  temperature            double precision not null default 0.7 check (temperature >= 0 and temperature <= 2),
  is_active              boolean not null default true,
  hash                   text not null,
  created_at             timestamptz not null default now(),
  updated_at             timestamptz not null default now()
);
create index usecases_client_idx on usecases (client_id, updated_at);

-- Sentences belong to a client; `tokens` is their size under the configured model's tokenizer.
create table sentences (
  id         serial primary key,
  client_id  integer not null references clients (id) on delete cascade,
  text       text not null,
  tokens     integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index sentences_client_idx on sentences (client_id);

-- The system prompt of a use case: its sentences in `position` order (1-based, kept contiguous).
create table usecase_sentences (
  usecase_id  integer not null references usecases (id) on delete cascade,
  sentence_id integer not null references sentences (id) on delete cascade,
  position    integer not null,
  primary key (usecase_id, sentence_id)
);
create index usecase_sentences_order_idx on usecase_sentences (usecase_id, position);

-- control_type: 'auto' (the model answers) or 'manual' (an operator, user_managing_id, answers).
-- auto_msg_due_at is the persisted schedule of the silence message; a poller claims due rows.
create table chats (
  id                serial primary key,
  usecase_id        integer not null references usecases (id) on delete cascade,
  user_id           integer references users (id) on delete set null,
  start_at          timestamptz not null default now(),
  finish_at         timestamptz,
  status            text not null default 'open',
  control_type      text not null default 'auto' check (control_type in ('auto', 'manual')),
  user_managing_id  integer references users (id) on delete set null,
  tokens            integer not null default 0,
  hash              text,
  is_active         boolean not null default true,
  needs_attention   boolean not null default false,
  auto_msg_due_at   timestamptz,
  auto_msg_sent_at  timestamptz,
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now()
);
create index chats_usecase_idx on chats (usecase_id);
create index chats_hash_idx on chats (hash);
create index chats_auto_msg_due_idx on chats (auto_msg_due_at) where auto_msg_due_at is not null;

-- role: 0 system, 1 user, 2 assistant; rate: 0 bad, 1 good, null not rated.
create table chat_sentences (
  id          serial primary key,
  chat_id     integer not null references chats (id) on delete cascade,
  sentence_id integer not null references sentences (id) on delete cascade,
  role        smallint not null check (role between 0 and 2),
  rate        smallint check (rate in (0, 1)),
  user_id     integer references users (id) on delete set null,
  tokens      integer not null default 0,
  created_at  timestamptz not null default now(),
  unique (chat_id, sentence_id)
);
create index chat_sentences_chat_idx on chat_sentences (chat_id, id);
