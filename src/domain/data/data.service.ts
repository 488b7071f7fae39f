import { createWriteStream } from 'node:fs';
import type { Kysely } from 'kysely';
import { Duration } from 'luxon';
import type { Database } from '../../db/schema.js';
import { INTERVAL_BOUNDS, type DataDatePart, type DatasetColumn, type DatasetKind } from '../../db/tables/data.js';
import type { ForecastInterval } from '../../training/index.js';
import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import { mayReach } from '../shared/access.js';
import { applyMappings, datePartOf, MAPPING_VALUES, parseMapping, type ColumnMapping } from './columns.js';
import type { DataRepository, DatasetRow } from './data.repository.js';
import { aggregateQuery, type ColumnsInfo } from './data-tables.js';
import { createUploads, type UploadsDeps } from './uploads.js';


export interface RowsQuery {
  jobId: number;
  output: 0 | 1;
  progress: 0 | 1;
  limit: number;
  insight: number;
  alter: number;
  estimate?: string;
  /** 1: output rows also carry their prediction-interval columns (`<column>_lo80`, ... `_hi95`). */
  intervals?: 0 | 1;
  /** At most this many rows (the chat's forecast tool); the legacy reads have no such cap on outputs. */
  cap?: number;
}

export type DataRow = Record<string, string | null>;

/** A calendar interval with whole units (seconds may be fractional), as make_interval takes it. */
export interface Period {
  years: number;
  months: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

/** A DateInterval string (`P1D`, `PT6H`, `P1Y2M`, `P2W`) read with luxon; it must move dates ahead. */
export function parsePeriod(text: string): Period {
  const invalid = (why: string) => Errors.invalidParameter('period', `'${text}' ${why}`);
  const duration = Duration.fromISO(text.trim());
  if (!duration.isValid) throw invalid('is not an ISO 8601 duration such as P1D, PT6H or P1Y2M');
  const o = duration.toObject();
  const period: Period = {
    years: o.years ?? 0,
    months: (o.months ?? 0) + (o.quarters ?? 0) * 3,
    days: (o.days ?? 0) + (o.weeks ?? 0) * 7,
    hours: o.hours ?? 0,
    minutes: o.minutes ?? 0,
    seconds: (o.seconds ?? 0) + (o.milliseconds ?? 0) / 1000,
  };
  const { seconds, ...whole } = period;
  if (Object.values(whole).some((v) => !Number.isInteger(v))) throw invalid('must use whole years, months, days, hours and minutes');
  if (Object.values(period).some((v) => v < 0)) throw invalid('must move dates ahead, not back');
  if (Object.values(whole).every((v) => v === 0) && seconds === 0) throw invalid('is an empty interval');
  // The database adds each part as an integer to a timestamp: a part beyond that, or a move of ten
  // thousand years, is no calendar move a forecast needs and would fail there instead of here.
  if (Object.values(whole).some((v) => v > 2_147_483_647)) throw invalid('is too large');
  const years = period.years + period.months / 12 + (period.days + (period.hours + (period.minutes + period.seconds / 60) / 60) / 24) / 365.2425;
  if (years >= 10_000) throw invalid('must move dates by less than 10,000 years');
  return period;
}

/** The columns a reader sees: prediction-interval columns only when asked for. */
const shown = (columns: DatasetColumn[], withIntervals = false) => (withIntervals ? columns : columns.filter((c) => !c.interval));

const trimNumber = (value: number) => String(Number(value.toFixed(6)));
const NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/** What the uploads take (uploads.ts) but the access rule, which the data service makes from the repository. */
export type DataServiceDeps = Omit<UploadsDeps, 'ownedJob'>;

export function createDataService(deps: DataServiceDeps) {
  const { repository } = deps;

  /** Consumers reach only their own jobs; someone else's job reads as missing. */
  async function ownedJob(caller: Caller, jobId: number) {
    const job = await repository.findJob(jobId);
    if (!job || !mayReach(caller, job.user_id)) throw Errors.notFound('Job', jobId);
    return job;
  }

  async function latest(jobId: number, kind: DatasetKind, executor?: Kysely<Database>): Promise<DatasetRow | undefined> {
    return repository.latestDataset(jobId, kind, executor);
  }

  async function required(jobId: number, kind: DatasetKind): Promise<DatasetRow> {
    const dataset = await latest(jobId, kind);
    if (!dataset) throw kind === 'input' ? Errors.noData(jobId) : Errors.noOutput(jobId);
    return dataset;
  }

  /** Fills in numeric/categorical for columns not yet detected, once per dataset. */
  async function withKinds(dataset: DatasetRow): Promise<DatasetColumn[]> {
    const pending = dataset.columns.filter((c) => c.kind === null).map((c) => c.col);
    if (pending.length === 0) return dataset.columns;
    const numeric = await repository.detectNumeric(dataset.id, pending);
    const columns = dataset.columns.map((c) => (c.kind === null ? { ...c, kind: numeric.get(c.col) ? ('numeric' as const) : ('categorical' as const) } : c));
    await repository.updateColumns(dataset.id, columns);
    dataset.columns = columns;
    return columns;
  }

  function columnNamed(columns: DatasetColumn[], name: string, parameter: string): DatasetColumn {
    const found = columns.find((c) => c.name === name) ?? columns.find((c) => c.name.toLowerCase() === name.trim().toLowerCase());
    if (!found) {
      throw Errors.invalidParameter(parameter, `'${name}' is not a column of the data (columns: ${columns.map((c) => c.name).join(', ')})`);
    }
    return found;
  }

  const toObjects = (columns: DatasetColumn[], rows: (string | null)[][]): DataRow[] =>
    rows.map((row) => {
      const record: DataRow = {};
      columns.forEach((c, i) => (record[c.name] = row[i] ?? null));
      return record;
    });

  return {
    ...createUploads({ ...deps, ownedJob }),

    /** Values a `{column-name}` field of PUT /data may take (GET /data type=1 without a job). */
    mappingValues() {
      return MAPPING_VALUES.map((v) => ({ ...v }));
    },

    /** Each column of a job's input (or latest output) with its detected type and training role. */
    async columns(caller: Caller, jobId: number, output: 0 | 1) {
      await ownedJob(caller, jobId);
      const dataset = await required(jobId, output ? 'output' : 'input');
      const columns = shown(await withKinds(dataset));
      return columns.map((c) => ({
        name: c.name,
        type: c.role === 'date' ? 'date' : (c.kind ?? 'categorical'),
        role: c.role,
        ...(c.datePart ? { date_part: c.datePart } : {}),
      }));
    },

    /** GET /data type=0, per the table of spec 4.5. */
    async rows(caller: Caller, q: RowsQuery): Promise<DataRow[] | [{ count: string }]> {
      await ownedJob(caller, q.jobId);
      if (![0, 1, 2].includes(q.insight)) throw Errors.invalidParameter('insight', 'must be 0, 1 or 2');
      const dataset = await latest(q.jobId, q.output ? 'output' : 'input');
      if (q.progress === 1) return [{ count: String(dataset?.row_count ?? 0) }];
      if (!dataset) return [];
      const columns = shown(dataset.columns, q.output === 1 && q.intervals === 1);
      const insight = q.output === 1 ? q.insight : 0;
      const needsEstimate = insight !== 0 || q.alter !== 0;
      if (needsEstimate && !q.estimate) throw Errors.missingParameter('estimate');
      const estimate = needsEstimate ? columnNamed(columns, q.estimate!, 'estimate') : undefined;
      const options: { limit?: number; sortDescBy?: number } = {};
      if (q.output === 0) options.limit = q.limit;
      if (q.cap !== undefined) options.limit = Math.min(options.limit ?? q.cap, q.cap);
      if (insight !== 0) {
        options.sortDescBy = estimate!.col;
        options.limit = insight === 1 ? Math.ceil(dataset.row_count * 0.8) : 20;
        if (options.limit === 0) return [];
      }
      const rows = await repository.readRows(
        dataset.id,
        columns.map((c) => c.col),
        options,
      );
      if (q.alter !== 0 && estimate) {
        const at = columns.indexOf(estimate);
        const factor = 1 + q.alter / 100;
        for (const row of rows) {
          const cell = row[at];
          if (cell && NUMBER.test(cell)) row[at] = trimNumber(Number(cell) * factor);
        }
      }
      return toObjects(columns, rows);
    },

    /**
     * For charts: the last `last` input rows whose `column` is known (a number, or any non-blank text),
     * in upload order with their row numbers among all input rows (1-based), and how many rows are known
     * in all. Rows carry `column` and the other `columns` named; only they leave the database, however
     * long the input. No input, or no such column in it: nothing known.
     */
    async knownTail(
      caller: Caller,
      q: { jobId: number; column: string; known: 'number' | 'text'; last: number; columns: string[] },
    ): Promise<{ known: number; rows: DataRow[]; positions: number[] }> {
      await ownedJob(caller, q.jobId);
      const dataset = await latest(q.jobId, 'input');
      const columns = dataset ? shown(dataset.columns) : [];
      const target = columns.find((c) => c.name === q.column);
      if (!dataset || !target) return { known: 0, rows: [], positions: [] };
      const read = columns.filter((c) => c === target || q.columns.includes(c.name));
      const tail = await repository.knownTail(dataset.id, target.col, q.known === 'number', read.map((c) => c.col), q.last);
      return { known: tail.known, rows: toObjects(read, tail.rows.map((r) => r.cells)), positions: tail.rows.map((r) => r.position) };
    },

    /**
     * PUT /data: `{column-name}` mappings on the input (output=0) or latest output (output=1), then
     * `period` moves the latest output's dates ahead into a new output record, whose id is answered.
     */
    async modify(caller: Caller, input: { jobId: number; output: 0 | 1; period?: string; fields: Record<string, string> }) {
      await ownedJob(caller, input.jobId);
      const period = input.period === undefined ? undefined : parsePeriod(input.period);
      const target = await latest(input.jobId, input.output ? 'output' : 'input');
      const mappings = new Map<string, ColumnMapping>();
      for (const [name, value] of Object.entries(input.fields)) {
        const column = target && shown(target.columns).find((c) => c.name === name);
        const mapping = parseMapping(value);
        if (!column) {
          // Stray fields are ignored unless they clearly mean a column that is not there.
          if (mapping) throw Errors.invalidParameter(name, `is not a column of the job's ${input.output ? 'output' : 'data'}`);
          continue;
        }
        if (!mapping) {
          throw Errors.invalidParameter(name, `must be ignore, input, output, numeric, categorical or a date part (year, month, day, hour, minute)`);
        }
        mappings.set(column.name, mapping);
      }
      if (mappings.size === 0 && !period) throw Errors.missingParameter('period');
      if (target && mappings.size > 0) {
        const mapped = applyMappings(target.columns, mappings);
        // A dropped forecast column takes its prediction intervals with it.
        const columns = mapped.filter((c) => !c.interval || mapped.some((o) => !o.interval && o.name === c.interval?.of));
        if (shown(columns).length === 0) throw Errors.invalidParameter('columns', 'at least one column must stay');
        await repository.updateColumns(target.id, columns);
        target.columns = columns;
      }
      if (!period) return 'success';
      const source = input.output === 1 && target ? target : await required(input.jobId, 'output');
      const parts: Partial<Record<DataDatePart, number>> = {};
      source.columns.forEach((c, i) => {
        if (c.role === 'date' && c.datePart) parts[c.datePart] = i + 1;
      });
      if (Object.keys(parts).length === 0) {
        throw Errors.invalidParameter('period', `the output of job ${input.jobId} has no date columns (year, month, day, hour, minute) to move`);
      }
      return repository.transaction(async (tx) => {
        const id = await tx.copyDataset(source, 'output');
        await tx.shiftDates(id, parts, period);
        return id;
      });
    },

    /** GET /zdai: grouped/ordered aggregation over the job's input rows (see data-tables.ts). */
    async aggregate(caller: Caller, input: { jobId: number; groupOrder: number; columnsInfo: ColumnsInfo; loadColumns: number }) {
      await ownedJob(caller, input.jobId);
      const dataset = await required(input.jobId, 'input');
      await withKinds(dataset);
      const { query, keys } = aggregateQuery(dataset, input);
      const rows = await repository.run<Record<string, unknown>>(query);
      return rows.map((row) => {
        const record: Record<string, string | null> = {};
        keys.forEach((key, i) => {
          const value = row[`k${i}`];
          // eslint-disable-next-line @typescript-eslint/no-base-to-string -- cells are text or numbers
          record[key] = value === null || value === undefined ? null : typeof value === 'number' ? trimNumber(value) : String(value);
        });
        return record;
      });
    },

    /** GET /zdao: a one-line confirmation of the job's latest output. */
    async outputSummary(caller: Caller, jobId: number): Promise<string> {
      await ownedJob(caller, jobId);
      const output = await required(jobId, 'output');
      return `Output ${output.id} of job ${jobId}: ${output.row_count} rows, ${shown(output.columns).length} columns`;
    },

    /**
     * POST /zdao: in the latest output, cells equal to one of `items` take the matching one of
     * `values`, each with the given probability (1 every cell, 0 none); date parts are left alone.
     */
    async replaceInOutput(caller: Caller, input: { jobId: number; items: string[]; values: string[]; probability: number }) {
      await ownedJob(caller, input.jobId);
      if (input.values.length !== 1 && input.values.length !== input.items.length) {
        throw Errors.invalidParameter('values', `gives ${input.values.length} values for ${input.items.length} items; give one value or one per item`);
      }
      const values = input.values.length === 1 ? input.items.map(() => input.values[0]!) : input.values;
      const output = await required(input.jobId, 'output');
      const cols = shown(output.columns)
        .filter((c) => c.role !== 'date')
        .map((c) => c.col);
      if (cols.length > 0) await repository.replaceCells(output.id, cols, input.items, values, input.probability);
      return 'success';
    },

    /** For the training engine: the job's input with column roles, rows in upload order. */
    async readTrainingSet(jobId: number) {
      const dataset = await required(jobId, 'input');
      const columns = await withKinds(dataset);
      const rows = await repository.readRows(
        dataset.id,
        columns.map((c) => c.col),
      );
      return {
        ...trainingColumns(columns),
        rows,
      };
    },

    /**
     * For the training runner: the job's input as a spool file for the training thread (training-set.ts),
     * streamed from the database in bounded memory; the rows are never held here. Columns whose kind is
     * not detected yet are named in `detect`: the thread detects them while it reads (no full-table scan
     * here), and the runner stores what it found with `recordKinds`.
     */
    async spoolTrainingSet(jobId: number, path: string) {
      const dataset = await required(jobId, 'input');
      const columns = dataset.columns;
      const out = createWriteStream(path);
      await repository.exportRows(
        dataset.id,
        columns.map((c) => c.col),
        out,
      );
      return {
        ...trainingColumns(columns),
        detect: columns.filter((c) => c.kind === null).map((c) => c.name),
        rows: dataset.row_count,
        bytes: out.bytesWritten,
      };
    },

    /** Stores the kinds the training thread detected for the columns of the job's input that had none. */
    async recordKinds(jobId: number, kinds: Record<string, 'numeric' | 'categorical'>): Promise<void> {
      const dataset = await latest(jobId, 'input');
      if (!dataset || !dataset.columns.some((c) => c.kind === null && kinds[c.name])) return;
      await repository.updateColumns(
        dataset.id,
        dataset.columns.map((c) => (c.kind === null && kinds[c.name] ? { ...c, kind: kinds[c.name]! } : c)),
      );
    },

    /**
     * For the training engine: stores forecast rows as a new output record; answers its id. `intervals`
     * (per row, per numeric output column) become hidden columns `<column>_lo80` ... `_hi95` after the
     * header's, read only with GET /data intervals=1. `executor`: the transaction that finishes a training
     * run, so the output is kept only with the job Finished.
     */
    async writeOutput(
      jobId: number,
      rows: Record<string, string>[],
      header: string[],
      intervals?: (Record<string, ForecastInterval> | undefined)[],
      executor?: Kysely<Database>,
    ): Promise<number> {
      // Inside the caller's transaction on the embedded database's one connection, a read beside it would wait for it forever.
      const input = await latest(jobId, 'input', executor);
      const known = new Map(input?.columns.map((c) => [c.name, c]));
      const columns = header.map((name, i): DatasetColumn => {
        const from = known.get(name);
        if (from) return { ...from, col: i + 1 };
        const datePart = datePartOf(name);
        return datePart ? { name, col: i + 1, role: 'date', kind: 'numeric', datePart } : { name, col: i + 1, role: 'input', kind: null };
      });
      const withBounds = header.filter((name) => intervals?.some((row) => row?.[name] !== undefined));
      for (const of of withBounds) {
        for (const bound of INTERVAL_BOUNDS) {
          columns.push({ name: `${of}_${bound}`, col: columns.length + 1, role: 'ignore', kind: 'numeric', interval: { of, bound } });
        }
      }
      const cells = rows.map((row, r) => [
        ...header.map((name) => row[name] ?? null),
        ...withBounds.flatMap((of) => INTERVAL_BOUNDS.map((bound) => intervals?.[r]?.[of]?.[bound] ?? null)),
      ]);
      const write = async (tx: ReturnType<DataRepository['within']>) => {
        const id = await tx.createDataset({ jobId, kind: 'output', columns, source: 'training', width: columns.length });
        await tx.insertRows(id, columns.length, cells);
        await tx.finishDataset(id);
        return id;
      };
      return executor ? write(repository.within(executor)) : repository.transaction(write);
    },

    /** DELETE /job_data and DELETE /training_data: the job's input and outputs are gone. */
    async deleteForJob(jobId: number): Promise<void> {
      await repository.deleteForJob(jobId);
    },
  };
}

/** The header and column roles the training engine reads (TrainingInput's header and columns). */
function trainingColumns(columns: DatasetColumn[]) {
  return {
    header: columns.map((c) => c.name),
    columns: columns.map((c) => ({
      name: c.name,
      role: c.role,
      kind: c.kind ?? ('categorical' as const),
      ...(c.datePart ? { datePart: c.datePart } : {}),
      ...(c.stated ? { stated: true } : {}),
    })),
  };
}

export type DataService = ReturnType<typeof createDataService>;