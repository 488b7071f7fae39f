-- why: hand-offs that say why (issue 12): every switch to manual control, attention flag and automatic
-- message keeps its reason; the chat shows the last one; use cases may cap the tokens of each chat.
alter table usecases add column token_budget integer not null default 0 check (token_budget >= 0);
alter table chats add column handoff_reason text;

-- event: what happened; reason: why. last_answer_id is the chat's latest assistant sentence at that
-- moment, so a report can tell the hand-offs that followed an answer rated bad.
create table chat_handoffs (
  id             serial primary key,
  chat_id        integer not null references chats (id) on delete cascade,
  usecase_id     integer not null references usecases (id) on delete cascade,
  event          text not null check (event in ('manual', 'attention', 'auto_message')),
  reason         text not null check (reason in ('word', 'operator', 'timeout', 'budget')),
  word           text,
  user_id        integer references users (id) on delete set null,
  last_answer_id integer,
  created_at     timestamptz not null default now()
);
create index chat_handoffs_usecase_idx on chat_handoffs (usecase_id, created_at);
create index chat_handoffs_chat_idx on chat_handoffs (chat_id);
