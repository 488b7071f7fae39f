import { randomInt } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { sql, type Compilable, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import copyStreams from 'pg-copy-streams';
import type { DatabaseHandle } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { copyFileInBatches } from '../../db/pglite-copy.js';
import type { DataDatePart, DatasetColumn, DatasetKind, DatasetsTable } from '../../db/tables/data.js';
import { markPendingQuery } from '../jobs/job-queue.repository.js';
import type { CsvDelimiter } from './csv-ingest.js';
import { createPoolRunner, DELIMITER_SQL, inBulkTransaction, inTransaction, kyselyRunner, type Query, type Runner } from './data-runner.js';

export type DatasetRow = Omit<Selectable<DatasetsTable>, 'source'>;

export interface JobOwner {
  id: number;
  user_id: number;
  status: number;
}

/** A cell is numeric when it matches this (a column is numeric when every non-empty cell does). */
export const NUMBER_PATTERN = '^\\s*[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?\\s*$';
export const cellRef = (col: number) => sql.ref(`c${Math.trunc(col)}`);
/** A numeric cell as SQL sees it: the number when the text reads as one, else null (never a cast error). */
export const numericCell = (col: number) => sql`(case when ${cellRef(col)} ~ ${sql.lit(NUMBER_PATTERN)} then ${cellRef(col)}::numeric end)`;
/** Rows per INSERT of a dataset's rows: each column goes as one array parameter, so a statement stays a few MB. */
const INSERT_ROWS = 10_000;
/** Rows tables are named from the integer id only. */
export const rowsTable = (datasetId: number) => sql.table(`data_rows_${Math.trunc(datasetId)}`);

/**
 * Table blocks (8 kB) per PGlite export query: 32 kB, a few hundred rows, about a millisecond each. A
 * request that needs the database meanwhile waits for the page under way on its one connection (128 kB
 * pages put the session check p99 at 1.8-2.4x idle while a 9 MB upload was exported, 32 kB at 1.3-1.4x,
 * measured when PGlite still ran on the event loop; docs/benchmarks.md).
 */
const EXPORT_PAGE_BLOCKS = 4;

/**
 * A spooled upload is copied into the embedded database in batches this large, by PGlite's thread
 * itself (pglite-copy.ts), between other requests' statements: a request waits at most for the batch
 * under way. A 16 kB batch takes about 1 ms, a 32 kB one 1.5 ms, a 64 kB one 2.7 ms (about 0.45 ms a
 * batch plus 30 ms a megabyte). Beside another user's session checks back to back (load 1-2), a 47 MB
 * upload was stored with their p99 at 1.5-1.7x idle in 6.3-6.6 s with 16 kB, 1.5-1.9x in 5.3 s with
 * 24 kB, 1.8-2.4x in 4.8-4.9 s with 32 kB; before, with PGlite on the event loop, 2.0-2.7x in 4.9-5.6 s
 * (bench/ingest/neighbour.ts and a one-off study of batch sizes, docs/benchmarks.md). 16 kB is the one size that kept
 * their p99 within 2x idle in every run: an upload must not slow everyone else's requests by more.
 */
const PGLITE_STAGING_BATCH_BYTES = 16 * 1024;

/**
 * An upload's rows are copied into a staging table outside any transaction, then renamed to its
 * data_rows_<id> in the short transaction that makes it the job's input. Named from integers only.
 */
const STAGING = /^data_staging_(\d+)_(\d+)$/;
const stagingTable = (name: string) => {
  if (!STAGING.test(name)) throw new Error(`not a staging table: ${name}`);
  return sql.table(name);
};
/** On Postgres other processes may be staging: only tables older than this are left over by a crash. */
const STALE_STAGING_MS = 60 * 60 * 1000;

export function createDataRepository(database: DatabaseHandle) {
  const db = database.db;
  const compile = (query: Compilable<unknown> | RawBuilder<unknown>): Query => query.compile(db);

  const poolRunner = createPoolRunner(database);

  /** The statements, against one runner. */
  const statements = (runner: Runner) => ({
    async lockJob(jobId: number): Promise<JobOwner | undefined> {
      const [row] = await runner.run<JobOwner>(compile(sql`select id, user_id, status from jobs where id = ${jobId} for update`));
      return row;
    },

    /** Uploading data is what queues a created job for training: the jobs area's one Created -> Pending statement. */
    async markJobPending(jobId: number): Promise<void> {
      await runner.run(compile(markPendingQuery(db, jobId)));
    },

    /** The job's new input from a filled staging table: a dataset row, and the table renamed to its rows table. */
    async adoptStaging(input: { jobId: number; columns: DatasetColumn[]; source: string; staging: string; rows: number }): Promise<number> {
      const [row] = await runner.run<{ id: number }>(
        compile(
          db
            .insertInto('datasets')
            .values({ job_id: input.jobId, kind: 'input', columns: JSON.stringify(input.columns), source: input.source, row_count: input.rows })
            .returning('id'),
        ),
      );
      await runner.run(compile(sql`alter table ${stagingTable(input.staging)} rename to ${rowsTable(row!.id)}`));
      return row!.id;
    },

    async createDataset(input: { jobId: number; kind: DatasetKind; columns: DatasetColumn[]; source: string; width: number }): Promise<number> {
      const [row] = await runner.run<{ id: number }>(
        compile(
          db
            .insertInto('datasets')
            .values({ job_id: input.jobId, kind: input.kind, columns: JSON.stringify(input.columns), source: input.source })
            .returning('id'),
        ),
      );
      const id = row!.id;
      const cells = Array.from({ length: input.width }, (_, i) => sql`${cellRef(i + 1)} text`);
      await runner.run(compile(sql`create table ${rowsTable(id)} (ord integer generated always as identity, ${sql.join(cells)})`));
      return id;
    },

    /** Rows (null is an empty cell) into a dataset's rows, in order, by INSERT: it runs on any connection, in any transaction. */
    async insertRows(datasetId: number, width: number, rows: (string | null)[][]): Promise<void> {
      const cells = Array.from({ length: width }, (_, i) => cellRef(i + 1));
      // One text array per column, unnested in order: about COPY's speed, where a bound value per cell took
      // twice as long, and it runs in any transaction (COPY needs a connection Kysely does not lend).
      for (let from = 0; from < rows.length; from += INSERT_ROWS) {
        const chunk = rows.slice(from, from + INSERT_ROWS);
        const arrays = Array.from({ length: width }, (_, c) => sql`${chunk.map((row) => row[c] ?? null)}::text[]`);
        await runner.run(
          compile(sql`insert into ${rowsTable(datasetId)} (${sql.join(cells)}) select ${sql.join(cells)} from unnest(${sql.join(arrays)}) with ordinality as u(${sql.join(cells)}, n) order by n`),
        );
      }
    },

    async finishDataset(datasetId: number): Promise<number> {
      const [row] = await runner.run<{ n: number }>(compile(sql`select count(*)::int as n from ${rowsTable(datasetId)}`));
      await runner.run(compile(db.updateTable('datasets').set({ row_count: row!.n }).where('id', '=', datasetId)));
      return row!.n;
    },

    async deleteDatasets(jobId: number, kind?: DatasetKind): Promise<void> {
      let query = db.deleteFrom('datasets').where('job_id', '=', jobId);
      if (kind) query = query.where('kind', '=', kind);
      await runner.run(compile(query));
    },

    /** A copy of a dataset's live columns (renumbered 1..n) as a new dataset of the same job. */
    async copyDataset(source: DatasetRow, kind: DatasetKind): Promise<number> {
      const columns = source.columns.map((c, i) => ({ ...c, col: i + 1 }));
      const id = await this.createDataset({ jobId: source.job_id, kind, columns, source: `copy of ${source.id}`, width: columns.length });
      const targets = columns.map((c) => cellRef(c.col));
      const sources = source.columns.map((c) => cellRef(c.col));
      await runner.run(
        compile(
          sql`insert into ${rowsTable(id)} (${sql.join(targets)}) select ${sql.join(sources)} from ${rowsTable(source.id)} order by ord`,
        ),
      );
      await this.finishDataset(id);
      return id;
    },

    /**
     * Moves the date parts of every row ahead by an interval. Rows whose parts do not read as a
     * date are left as they are; a day past the month's end rolls over instead of failing.
     */
    async shiftDates(
      datasetId: number,
      parts: Partial<Record<DataDatePart, number>>,
      by: { years: number; months: number; days: number; hours: number; minutes: number; seconds: number },
    ): Promise<void> {
      const int = (col: number | undefined, fallback: number) => (col === undefined ? sql.lit(fallback) : sql`${cellRef(col)}::int`);
      const checks = Object.values(parts).map((col) => sql`${cellRef(col)} ~ '^\\s*[0-9]{1,4}\\s*$'`);
      const ranges: RawBuilder<unknown>[] = [];
      if (parts.year !== undefined) ranges.push(sql`${cellRef(parts.year)}::int between 1 and 9999`);
      if (parts.month !== undefined) ranges.push(sql`${cellRef(parts.month)}::int between 1 and 12`);
      if (parts.day !== undefined) ranges.push(sql`${cellRef(parts.day)}::int between 1 and 31`);
      if (parts.hour !== undefined) ranges.push(sql`${cellRef(parts.hour)}::int between 0 and 23`);
      if (parts.minute !== undefined) ranges.push(sql`${cellRef(parts.minute)}::int between 0 and 59`);
      const moment = sql`make_timestamp(${int(parts.year, 2000)}, ${int(parts.month, 1)}, 1, ${int(parts.hour, 0)}, ${int(parts.minute, 0)}, 0)
        + (${int(parts.day, 1)} - 1) * interval '1 day'
        + make_interval(years => ${by.years}::int, months => ${by.months}::int, days => ${by.days}::int, hours => ${by.hours}::int, mins => ${by.minutes}::int, secs => ${by.seconds}::float8)`;
      const sets = (Object.entries(parts) as [DataDatePart, number][]).map(
        ([part, col]) => sql`${cellRef(col)} = extract(${sql.raw(part)} from moved.at)::int::text`,
      );
      // The checks must hold before any cast runs, so the casts sit behind a CASE.
      await runner.run(
        compile(sql`
          with valid as (
            select ord from ${rowsTable(datasetId)} where ${sql.join(checks, sql` and `)}
          ), moved as (
            select t.ord, case when ${sql.join(ranges, sql` and `)} then ${moment} end as at
            from ${rowsTable(datasetId)} t join valid using (ord)
          )
          update ${rowsTable(datasetId)} r set ${sql.join(sets)}
          from moved where r.ord = moved.ord and moved.at is not null`),
      );
    },
  });

  const plain = statements(poolRunner);

  return {
    /** One all-or-nothing unit of work (an upload, an output written on its own): statements on one connection. */
    async transaction<T>(work: (tx: ReturnType<typeof statements>) => Promise<T>): Promise<T> {
      return inTransaction(database, (runner) => work(statements(runner)));
    },

    /** The statements inside a caller's transaction (a training run's results, stored with its status). */
    within: (executor: Kysely<Database>) => statements(kyselyRunner(executor)),

    /**
     * Copies spooled files (COPY text lines) into a new staging table; answers its name. No job lock
     * and no client in the loop: on the embedded database each batch takes the one connection alone,
     * other requests run between them (a crash leaves a table, dropped at the next start); on Postgres
     * one pooled connection creates and fills it in one transaction, so a crash leaves nothing.
     * `failed` turns a file's COPY error into the caller's error.
     */
    async stage(width: number, files: readonly { delimiter: CsvDelimiter; path: string }[], failed: (error: unknown, file: number) => unknown): Promise<string> {
      const name = `data_staging_${Date.now()}_${randomInt(2 ** 31)}`;
      const cells = Array.from({ length: width }, (_, i) => sql`${cellRef(i + 1)} text`);
      const create = compile(sql`create table ${stagingTable(name)} (ord integer generated always as identity, ${sql.join(cells)})`);
      const list = Array.from({ length: width }, (_, i) => `c${i + 1}`).join(', ');
      const copy = (delimiter: CsvDelimiter, target: string) => `copy ${name} (${list}) from ${target} with (format text, delimiter ${DELIMITER_SQL[delimiter]})`;
      if (database.kind === 'pglite') {
        const pglite = database.pglite!;
        await poolRunner.run(create);
        try {
          for (const [i, file] of files.entries()) {
            try {
              await copyFileInBatches(pglite, (work) => db.connection().execute(work), copy(file.delimiter, `'/dev/blob'`), file.path, PGLITE_STAGING_BATCH_BYTES);
            } catch (error) {
              throw failed(error, i);
            }
          }
        } catch (error) {
          await this.dropStaging(name).catch(() => undefined);
          throw error;
        }
        return name;
      }
      return inBulkTransaction(database, async (client) => {
        await client.query(create.sql, create.parameters as unknown[]);
        for (const [i, file] of files.entries()) {
          try {
            await pipeline(createReadStream(file.path), client.query(copyStreams.from(copy(file.delimiter, 'stdin'))));
          } catch (error) {
            throw failed(error, i);
          }
        }
        return name;
      });
    },

    async dropStaging(staging: string): Promise<void> {
      await poolRunner.run(compile(sql`drop table if exists ${stagingTable(staging)}`));
    },

    /** At start: staging tables a crashed process left (all of them on the embedded database, which is this process's alone). */
    async dropStaleStaging(): Promise<number> {
      const tables = await poolRunner.run<{ name: string }>(compile(sql`select tablename as name from pg_tables where tablename like 'data\_staging\_%'`));
      let dropped = 0;
      for (const { name } of tables) {
        const match = STAGING.exec(name);
        if (!match) continue;
        if (database.kind !== 'pglite' && Date.now() - Number(match[1]) < STALE_STAGING_MS) continue;
        await this.dropStaging(name);
        dropped++;
      }
      return dropped;
    },

    async findJob(jobId: number): Promise<JobOwner | undefined> {
      return db.selectFrom('jobs').select(['id', 'user_id', 'status']).where('id', '=', jobId).executeTakeFirst();
    },

    async latestDataset(jobId: number, kind: DatasetKind, executor: Kysely<Database> = db): Promise<DatasetRow | undefined> {
      return executor
        .selectFrom('datasets')
        .select(['id', 'job_id', 'kind', 'columns', 'row_count', 'created_at'])
        .where('job_id', '=', jobId)
        .where('kind', '=', kind)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    async updateColumns(datasetId: number, columns: DatasetColumn[]): Promise<void> {
      await db.updateTable('datasets').set({ columns: JSON.stringify(columns) }).where('id', '=', datasetId).execute();
    },

    /** Per column: every non-empty cell reads as a number (and at least one is not empty). */
    async detectNumeric(datasetId: number, cols: number[]): Promise<Map<number, boolean>> {
      if (cols.length === 0) return new Map();
      const probes = cols.map(
        (col) =>
          sql`coalesce(bool_and(${cellRef(col)} = '' or ${cellRef(col)} ~ ${sql.lit(NUMBER_PATTERN)}) and bool_or(${cellRef(col)} <> ''), false) as ${sql.ref(`n${col}`)}`,
      );
      const [row] = await poolRunner.run<Record<string, boolean>>(compile(sql`select ${sql.join(probes)} from ${rowsTable(datasetId)}`));
      return new Map(cols.map((col) => [col, Boolean(row?.[`n${col}`])]));
    },

    /** Rows as arrays of the given columns' cells, in upload order or by a column descending. */
    async readRows(
      datasetId: number,
      cols: number[],
      options: { limit?: number; sortDescBy?: number } = {},
    ): Promise<(string | null)[][]> {
      const select = sql.join(cols.map((col) => cellRef(col)));
      const order =
        options.sortDescBy === undefined
          ? sql`ord`
          : sql`${numericCell(options.sortDescBy)} desc nulls last, ${cellRef(options.sortDescBy)} desc, ord`;
      const limit = options.limit && options.limit > 0 ? sql`limit ${Math.trunc(options.limit)}` : sql``;
      const rows = await poolRunner.run<Record<string, string | null>>(compile(sql`select ${select} from ${rowsTable(datasetId)} order by ${order} ${limit}`));
      const keys = cols.map((col) => `c${col}`);
      return rows.map((row) => keys.map((key) => row[key] ?? null));
    },

    /**
     * The last `last` rows, in upload order, whose cell in `col` is known (reads as a number when
     * `numeric`, else holds a non-blank character), as arrays of the cells of `cols` (at least one), each
     * with its row number among all the dataset's rows (1-based; unknown rows count too), and how many
     * rows are known in all. Cut and counted here, so a long dataset never leaves the database whole: a
     * top-N of `ord`, the counts, and row numbers by a window over only the rows from the first kept one on.
     */
    async knownTail(
      datasetId: number,
      col: number,
      numeric: boolean,
      cols: number[],
      last: number,
    ): Promise<{ known: number; rows: { position: number; cells: (string | null)[] }[] }> {
      const table = rowsTable(datasetId);
      const known = numeric ? sql`${cellRef(col)} ~ ${sql.lit(NUMBER_PATTERN)}` : sql`${cellRef(col)} ~ '\\S'`;
      const cells = cols.map((c) => cellRef(c));
      const rows = await poolRunner.run<Record<string, string | number | null>>(
        compile(sql`
          with tail as (
            select ord from ${table} where ${known} order by ord desc limit ${Math.max(1, Math.trunc(last))}
          ), start as (
            select min(ord) as ord from tail
          ), counts as (
            select count(*) filter (where ${known})::int as known_rows,
              count(*) filter (where ord < (select ord from start))::int as rows_before
            from ${table}
          )
          select counts.known_rows, (counts.rows_before + ranged.position)::int as row_position, ${sql.join(cells.map((c) => sql`ranged.${c}`))}
          from counts left join (
            select ord, ${known} as is_known, row_number() over (order by ord) as position, ${sql.join(cells)}
            from ${table} where ord >= (select ord from start)
          ) ranged on ranged.is_known
          order by ranged.ord`),
      );
      const keys = cols.map((c) => `c${c}`);
      // With no known row the left join still answers one row, with the count and no cells.
      return {
        known: Number(rows[0]?.known_rows ?? 0),
        rows: rows
          .filter((row) => row.row_position !== null)
          .map((row) => ({ position: Number(row.row_position), cells: keys.map((key) => (row[key] ?? null) as string | null) })),
      };
    },

    /**
     * Streams a dataset's rows (`ord`, then the given columns) in upload order, COPY text format, to
     * `out`, in bounded memory. Postgres: one COPY TO STDOUT with backpressure. PGlite (one connection;
     * it answers a COPY with one Blob): COPY TO '/dev/blob' page by page of the table's blocks (a TID
     * range scan each), each page taking the connection on its own so other requests are served. A rows table
     * is only ever appended to by COPY (uploads), so its physical order is its `ord` order; the reader
     * checks `ord` rises (training-set.ts) rather than trusting this.
     */
    async exportRows(datasetId: number, cols: number[], out: NodeJS.WritableStream): Promise<void> {
      const table = `data_rows_${Math.trunc(datasetId)}`;
      const list = ['ord', ...cols.map((col) => `c${Math.trunc(col)}`)].join(', ');
      if (database.kind !== 'pglite') {
        const client = await database.bulkPool!.connect();
        try {
          await pipeline(client.query(copyStreams.to(`copy (select ${list} from ${table} order by ord) to stdout`)), out);
        } finally {
          client.release();
        }
        return;
      }
      const pglite = database.pglite!;
      // Each query takes the dialect's one connection, as the staging batches do: a bare pglite.query could
      // land inside another request's open transaction (an upload's swap) and abort it on an error.
      const exclusive = <T>(work: () => Promise<T>) => db.connection().execute(() => work());
      const [size] = (await exclusive(() => pglite.query<{ blocks: number }>(`select (pg_relation_size('${table}') / current_setting('block_size')::int)::int as blocks`))).rows;
      const blocks = size?.blocks ?? 0;
      await pipeline(async function* () {
        for (let first = 0; first < blocks; first += EXPORT_PAGE_BLOCKS) {
          const last = first + EXPORT_PAGE_BLOCKS;
          const result = await exclusive(() =>
            pglite.query(`copy (select ${list} from ${table} where ctid >= '(${first},0)'::tid and ctid < '(${last},0)'::tid order by ord) to '/dev/blob'`, []),
          );
          if (result.blob && result.blob.size > 0) yield Buffer.from(await result.blob.arrayBuffer());
        }
      }, out);
    },

    /** Cells equal to items[i] become values[i], each with the given probability. */
    async replaceCells(datasetId: number, cols: number[], items: string[], values: string[], probability: number): Promise<void> {
      const sets = cols.map(
        (col) => sql`${cellRef(col)} = case when ${cellRef(col)} = any(${items}::text[]) and random() < ${probability}::float8
          then (${values}::text[])[array_position(${items}::text[], ${cellRef(col)})] else ${cellRef(col)} end`,
      );
      const touched = cols.map((col) => sql`${cellRef(col)} = any(${items}::text[])`);
      await poolRunner.run(compile(sql`update ${rowsTable(datasetId)} set ${sql.join(sets)} where ${sql.join(touched, sql` or `)}`));
    },

    async run<R>(query: RawBuilder<unknown>): Promise<R[]> {
      return poolRunner.run<R>(compile(query));
    },

    async deleteForJob(jobId: number): Promise<void> {
      await plain.deleteDatasets(jobId);
    },
  };
}

export type DataRepository = ReturnType<typeof createDataRepository>;
