import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SETS, toCsv } from '../../bench/forecast/datasets.js';
import { openPGlite } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';
import { loadTrainingSet, rowsThatFit, type TrainingLimits } from '../../src/training/run/training-set.js';
import { trainModel } from '../../src/training/run/engine.js';
import { TrainingError, type ColumnSpec } from '../../src/training/core/types.js';
import { CURRENT, createTestContext, form, multipart } from '../support/helper.js';

const dir = mkdtempSync(join(tmpdir(), 'training-set-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A spool file as the database's COPY TO writes it: ord, then the cells, text format. */
function spoolOf(rows: (string | null)[][], name = `s${Math.random().toString(36).slice(2)}.tsv`): string {
  const escape = (cell: string | null) => (cell === null ? '\\N' : cell.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r'));
  const path = join(dir, name);
  writeFileSync(path, rows.map((row, i) => [String(i + 1), ...row.map(escape)].join('\t') + '\n').join(''));
  return path;
}

const LIMITS: TrainingLimits = { maxRows: 1000, budgetMb: 512 };
const SERIES: ColumnSpec[] = [
  { name: 'year', role: 'date', kind: 'numeric', datePart: 'year' },
  { name: 'month', role: 'date', kind: 'numeric', datePart: 'month' },
  { name: 'x', role: 'input', kind: 'numeric' },
  { name: 'y', role: 'output', kind: 'numeric' },
];
const TABULAR: ColumnSpec[] = [
  { name: 'x', role: 'input', kind: 'numeric' },
  { name: 'shop', role: 'input', kind: 'categorical' },
  { name: 'y', role: 'output', kind: 'numeric' },
];

/** A monthly series: row i holds x = i and y = 2i; the last `hidden` rows have y empty (to forecast). */
function monthly(known: number, hidden: number): (string | null)[][] {
  return Array.from({ length: known + hidden }, (_, i) => [String(2000 + Math.floor(i / 12)), String((i % 12) + 1), String(i), i >= known ? '' : String(2 * i)]);
}

describe('the training set read in the training thread', () => {
  it("says how much of the spool file it has read, chunk by chunk, up to all of it (a large panel's bar moves while it is read)", async () => {
    // About 3.5 MB: four 1 MB chunks.
    const rows = monthly(150_000, 12);
    const shares: number[] = [];
    await loadTrainingSet({ path: spoolOf(rows), header: ['year', 'month', 'x', 'y'], columns: SERIES }, {}, LIMITS, (share) => shares.push(share));
    expect(shares.length).toBeGreaterThanOrEqual(4);
    expect(shares.every((share, i) => share > 0 && share <= 1 && (i === 0 || share > shares[i - 1]!))).toBe(true);
    expect(shares.at(-1)).toBe(1);
  });

  it('hands the engine every row exactly as stored when nothing is capped (nulls, empty cells, "1.50", escapes)', async () => {
    const rows: (string | null)[][] = [
      ['2000', '1', '1.50', '3'],
      ['2000', '2', null, '4'],
      ['2000', '3', ' 7', '-0'],
      ['2000', '4', '1e3', '5'],
      ['2000', '5', '0.1', '1e21'],
      ['2000', '6', 'tab\there', 'back\\slash'],
      ['2000', '7', 'new\nline', ''],
      ['2000', '8', '', null],
      ['2000', '9', '12', '12.000'],
    ];
    const path = spoolOf(rows);
    const header = ['year', 'month', 'x', 'y'];
    const { input, report } = await loadTrainingSet({ path, header, columns: SERIES }, {}, LIMITS);
    expect(input.rows).toEqual(rows);
    expect(input.header).toEqual(header);
    expect(report).toMatchObject({ rows: 9, cap: { rule: 'none' } });
    // Categorical columns are dictionary-coded, and just as exact.
    const tabular = [
      ['1', 'A', '2'],
      ['2', 'B', ''],
      ['3', 'A', '4'],
      ['4', null, '5'],
    ];
    const back = await loadTrainingSet({ path: spoolOf(tabular), header: ['x', 'shop', 'y'], columns: TABULAR }, {}, LIMITS);
    expect(back.input.rows).toEqual(tabular);
  });

  it('detects the kinds the database has not, by its rule, and still hands the cells over exactly', async () => {
    const rows = [
      ['1', ' 2.5 ', 'a', '', '10'],
      ['2', '', '3', '', '11'],
      ['3', '1e3', 'b', null, '12'],
      ['4', '7', '4', '', ''],
    ];
    const columns: ColumnSpec[] = ['n', 'num', 'mixed', 'empty', 'y'].map((name) => ({ name, role: name === 'y' ? 'output' : 'input', kind: 'categorical' }));
    const { input, report } = await loadTrainingSet({ path: spoolOf(rows), header: ['n', 'num', 'mixed', 'empty', 'y'], columns, detect: ['num', 'mixed', 'empty', 'y'] }, {}, LIMITS);
    expect(report.kinds).toEqual({ num: 'numeric', mixed: 'categorical', empty: 'categorical', y: 'numeric' });
    expect(input.columns.map((c) => c.kind)).toEqual(['categorical', 'numeric', 'categorical', 'categorical', 'numeric']);
    expect(input.rows).toEqual(rows);
  });

  it('DataRowsToConsider keeps the most recent N known rows and every row to forecast, in upload order', async () => {
    const rows = monthly(300, 6);
    const { input, report } = await loadTrainingSet({ path: spoolOf(rows), header: ['year', 'month', 'x', 'y'], columns: SERIES }, { dataRowsToConsider: 50 }, LIMITS);
    expect(input.rows).toEqual([...rows.slice(250, 300), ...rows.slice(300)]);
    expect(report).toMatchObject({ rows: 306, known: 50, forecast: 6, cap: { rows: 50, rule: 'DataRowsToConsider' } });
    expect(input.params.dataRowsToConsider).toBe(50);
  });

  it('past TRAINING_MAX_ROWS a series keeps its most recent rows; known rows the engine would skip do not count', async () => {
    const rows = monthly(5000, 3);
    // An output with no number is a row the engine skips (an input's is not: the engine carries its last value into it).
    rows[4990] = ['2415', '11', '4990', 'not a number'];
    const { input, report } = await loadTrainingSet({ path: spoolOf(rows), header: ['year', 'month', 'x', 'y'], columns: SERIES }, {}, { ...LIMITS, maxRows: 400 });
    expect(input.rows).toHaveLength(403);
    expect(input.rows).toEqual([...rows.slice(4599, 4990), ...rows.slice(4991, 5003)]);
    expect(report).toMatchObject({ rows: 5003, known: 400, forecast: 3, cap: { rows: 400, rule: 'most recent' } });
  });

  it('past TRAINING_MAX_ROWS many series in one upload (date parts going back) keep every series, each cut to the rows the engine keeps of it', async () => {
    const one = monthly(300, 2);
    const rows = ['a', 'b', 'c'].flatMap((key) => one.map((r) => [key, ...r]));
    const columns: ColumnSpec[] = [{ name: 'store', role: 'input', kind: 'categorical' }, ...SERIES];
    const { input, report } = await loadTrainingSet({ path: spoolOf(rows), header: ['store', 'year', 'month', 'x', 'y'], columns }, {}, { ...LIMITS, maxRows: 400 });
    // max(24, 400 / 3) = 133 most recent known rows of each store, and its rows to forecast.
    const kept = ['a', 'b', 'c'].flatMap((key) => one.slice(300 - 133).map((r) => [key, ...r]));
    expect(input.rows).toEqual(kept);
    expect(input.params.maxKnownRows).toBe(400);
    expect(report).toMatchObject({ known: 3 * 133, forecast: 6, cap: { rows: 133, rule: 'most recent per series' } });
    // The engine, which cuts each series to the same rows, forecasts exactly as from every row.
    const whole = trainModel({ header: input.header, columns: input.columns, rows, params: { maxKnownRows: 400 } });
    const cut = trainModel(input);
    const answers = (r: ReturnType<typeof trainModel>) => r.forecasts.map((f) => ({ values: f.values, intervals: f.intervals }));
    expect(answers(cut)).toEqual(answers(whole));
  });

  it('leaves a panel whose series go back in time to the engine (it cuts each by date)', async () => {
    const one = monthly(300, 2);
    const backwards = [...one.slice(0, 300).reverse(), ...one.slice(300)];
    const rows = ['a', 'b'].flatMap((key) => backwards.map((r) => [key, ...r]));
    const columns: ColumnSpec[] = [{ name: 'store', role: 'key', kind: 'categorical' }, ...SERIES];
    const { input, report } = await loadTrainingSet({ path: spoolOf(rows), header: ['store', 'year', 'month', 'x', 'y'], columns }, {}, { ...LIMITS, maxRows: 400 });
    expect(input.rows).toEqual(rows);
    expect(report.cap.rule).toBe('none');
  });

  it('keeps fewer rows than TRAINING_MAX_ROWS when that many would not fit the memory budget', async () => {
    const rows = monthly(10_000, 0);
    const { input, report } = await loadTrainingSet({ path: spoolOf(rows), header: ['year', 'month', 'x', 'y'], columns: SERIES }, {}, { maxRows: 50_000, budgetMb: 128 });
    expect(report.known).toBe(rowsThatFit(128, 4));
    expect(report.known).toBeLessThan(5000);
    expect(report.cap).toEqual({ rows: report.known, rule: 'most recent' });
    expect(input.rows).toEqual(rows.slice(10_000 - report.known));
    expect(report.estimateMb).toBeLessThanOrEqual(128);
  });

  it('past TRAINING_MAX_ROWS tabular data keeps a seeded sample from the whole upload, in upload order', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => [String(i), i % 2 ? 'A' : 'B', String(3 * i)]);
    const spool = { path: spoolOf(rows), header: ['x', 'shop', 'y'], columns: TABULAR };
    const limits = { ...LIMITS, maxRows: 500 };
    const first = await loadTrainingSet(spool, {}, limits);
    const again = await loadTrainingSet(spool, {}, limits);
    const other = await loadTrainingSet(spool, { seed: 42 }, limits);
    expect(first.report).toMatchObject({ known: 500, cap: { rule: 'seeded sample' } });
    expect(again.input.rows).toEqual(first.input.rows);
    expect(other.input.rows).not.toEqual(first.input.rows);
    const picked = first.input.rows.map((r) => Number(r[0]));
    expect(picked).toEqual([...picked].sort((a, b) => a - b));
    // Drawn from the whole upload, not its head or tail.
    expect(picked.filter((i) => i < 10_000).length).toBeGreaterThan(200);
    expect(picked.filter((i) => i >= 10_000).length).toBeGreaterThan(200);
    for (const row of first.input.rows) expect(row).toEqual(rows[Number(row[0])]);
  });

  it('refuses a set over the memory budget with what it needs and the budget', async () => {
    // Rows to forecast are never capped: 60,000 of them do not fit 64 MB.
    const rows = monthly(10, 60_000);
    const error = await loadTrainingSet({ path: spoolOf(rows), header: ['year', 'month', 'x', 'y'], columns: SERIES }, {}, { maxRows: 1000, budgetMb: 64 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrainingError);
    expect((error as TrainingError).code).toBe('too_large');
    expect((error as Error).message).toMatch(/^This training needs about \d+ MB, budget 64 MB \(/);
  });
});

describe('results do not move', () => {
  it('every forecast benchmark set reaches the engine through the spool exactly as readTrainingSet read it (cells, column kinds)', async () => {
    const database = await openPGlite();
    await migrate(database);
    const ctx = await createTestContext({ database });
    try {
      const user = await ctx.createUser();
      await ctx.request({ method: 'POST', url: `/202111101200/subscriptions.php?session=${user.session}`, ...form({ app: 'forecast' }) });
      for (const [id, make] of Object.entries(SETS)) {
        const job = await ctx.request({ method: 'POST', url: `${CURRENT}/jobs.php?session=${user.session}&tz=UTC&app_name=forecast&newTraining=1` });
        const jobId = Number((job.envelope.data as { job_id: number }).job_id);
        const csv = toCsv(make());
        const stored = await ctx.request({ method: 'POST', url: `${CURRENT}/data.php?tz=UTC`, ...multipart({ session: user.session, job_id: jobId, file: 1 }, [{ field: 'Servicefile', filename: `${id}.csv`, content: csv }]) });
        expect(stored.envelope.status, String(stored.envelope.data)).toBe(0);
        // The spool first: the thread detects the kinds the database has not (readTrainingSet then scans for them).
        const path = join(dir, `${id}.tsv`);
        const spool = await ctx.services.data.spoolTrainingSet(jobId, path);
        const fresh = await loadTrainingSet({ path, header: spool.header, columns: spool.columns, detect: spool.detect }, {}, { maxRows: 100_000, budgetMb: 512 });
        const old = await ctx.services.data.readTrainingSet(jobId);
        expect(fresh.report.cap.rule, id).toBe('none');
        expect(JSON.stringify(fresh.input.columns), id).toBe(JSON.stringify(old.columns));
        expect(fresh.input.header, id).toEqual(old.header);
        expect(fresh.input.rows.length, id).toBe(old.rows.length);
        expect(JSON.stringify(fresh.input.rows) === JSON.stringify(old.rows), `${id}: rows differ`).toBe(true);
      }
    } finally {
      await ctx.close();
    }
  }, 120_000);
});
