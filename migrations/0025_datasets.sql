-- why: uploaded CSV data (a job's input) and the forecasts written from it (its outputs) are stored per upload.
-- A dataset is one upload or one output record; its rows live in their own table data_rows_<id> with one
-- text column per CSV column (c1..cN, in header order) plus `ord` (upload order). A table per dataset was
-- chosen by measurement (docs/notes/data.md): COPY passes the CSV bytes through nearly untouched, and
-- deleting a million rows is a DROP TABLE. The table name is built only from the integer id.
create table datasets (
  id          serial primary key,
  job_id      integer not null references jobs (id) on delete cascade,
  kind        text not null check (kind in ('input', 'output')),
  -- [{name, col, role, kind, datePart?}]: col is the physical column number (c<col>), kind is null until detected.
  columns     jsonb not null,
  row_count   integer not null default 0,
  source      text not null default '',
  created_at  timestamptz not null default now()
);
create index datasets_job_idx on datasets (job_id, kind, id);

-- Whoever deletes a dataset (directly, or by deleting its job or user) drops its rows table with it.
create function drop_dataset_rows() returns trigger language plpgsql as $$
begin
  execute format('drop table if exists %I', 'data_rows_' || old.id);
  return old;
end
$$;
create trigger datasets_drop_rows after delete on datasets for each row execute function drop_dataset_rows();
