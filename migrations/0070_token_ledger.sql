-- why: one ledger for training compute and language-model tokens (issue 12): every model reply writes a
-- consumption row beside the training runs' rows, and an invoiced row never changes again.
-- client/use case/chat carry no foreign key, like job_id: billing records outlive what they bill.
alter table consumptions
  add column kind              text not null default 'training' check (kind in ('training', 'chat', 'aichat')),
  add column client_id         integer,
  add column usecase_id        integer,
  add column chat_id           integer,
  add column model             text,
  add column prompt_tokens     integer check (prompt_tokens >= 0),
  add column completion_tokens integer check (completion_tokens >= 0);
create index consumptions_client_date_idx on consumptions (client_id, date) where client_id is not null;

-- An invoiced record is final: no update, no delete; a correction is a new record.
create function consumptions_invoiced_final() returns trigger language plpgsql as $$
begin
  if old.date_invoiced is not null then
    raise exception 'consumption % is invoiced and cannot change; record a correction instead', old.id
      using errcode = 'check_violation';
  end if;
  if tg_op = 'DELETE' then return old; end if;
  return new;
end $$;
create trigger consumptions_invoiced_final before update or delete on consumptions
  for each row execute function consumptions_invoiced_final();
