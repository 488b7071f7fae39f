/**
 * Bad covariates get a clear answer and lose nothing, through the API: each upload below trains to a forecast,
 * and the training's notes (Selection.timeNotes, which the finished status record's text carries too) say what
 * was done. Real data: vega-datasets' driving.json (US miles driven per capita and the real gas price,
 * 1956-2010; the last 5 years' miles left empty) and its unemployment by industry with the unemployment rate
 * as the covariate of a panel.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainingContext, type forecastJobs, type Row } from '../support/forecast-jobs.js';
import { VEGA_DATA } from '../support/industries.js';

let jobs: ReturnType<typeof forecastJobs>;
let close: () => Promise<void>;
const TZ = 'UTC';
const ENGINE_TIMEOUT = 240_000;

interface Driving {
  year: number;
  miles: number;
  gas: number;
}
const DRIVING = JSON.parse(readFileSync(join(VEGA_DATA, 'driving.json'), 'utf8')) as Driving[];
/** The last HIDDEN years' miles are the rows to forecast (2006-2010). */
const HIDDEN = 5;
const toForecast = (i: number) => i >= DRIVING.length - HIDDEN;

/** driving.json as a CSV: `year`, the covariate columns `cells` gives, `miles` (empty in the rows to forecast). */
function drivingCsv(columns: string[], cells: (r: Driving, i: number) => string[]): string {
  const lines = [['year', ...columns, 'miles'].join(',')];
  DRIVING.forEach((r, i) => lines.push([String(r.year), ...cells(r, i), toForecast(i) ? '' : String(r.miles)].join(',')));
  return `${lines.join('\n')}\n`;
}

/** Trains an upload to its end and answers its output, notes and the finished status record's text. */
async function train(csv: string): Promise<{ rows: Row[]; notes: string[]; text: string }> {
  const { jobId } = await jobs.jobWithData(csv);
  await jobs.finished(jobId);
  const rows = await jobs.output(jobId);
  const selection = (await jobs.stat(jobId)).Selection as { timeNotes?: string[] } | null;
  const records = await jobs.statusRecords(jobId);
  return { rows, notes: selection?.timeNotes ?? [], text: records[0]?.text ?? '' };
}

/** Every row to forecast is answered with a number. */
function expectForecast(rows: Row[], output: string, count: number) {
  const answered = rows.filter((r) => r[output] !== '' && Number.isFinite(Number(r[output])));
  expect(answered.length).toBe(count);
}

beforeAll(async () => {
  ({ jobs, close } = await trainingContext(TZ, ENGINE_TIMEOUT));
}, 60_000);

afterAll(async () => {
  await close?.();
});

describe('a covariate filled in some rows to forecast and not in others', () => {
  it('carries its last value forward into the empty future cells, names their dates and forecasts', { timeout: ENGINE_TIMEOUT }, async () => {
    // The gas price is known for 2006 and 2007 and left empty for 2008-2010.
    const csv = drivingCsv(['gas'], (r, i) => [i >= DRIVING.length - 3 ? '' : String(r.gas)]);
    const { rows, notes, text } = await train(csv);
    const said = "input 'gas' is empty in 3 of the 5 rows to forecast (2008, 2009 and 2010): each takes the column's last value before it, carried forward";
    expect(notes).toContain(said);
    expect(text).toContain(said);
    expectForecast(rows, 'miles', HIDDEN);
    // The output shows the user's cells: nothing made up appears as data.
    expect(rows.map((r) => r.gas)).toEqual(['2.79', '2.95', '', '', '']);
  });
});

describe('covariates that cannot teach a model anything', () => {
  let result: Awaited<ReturnType<typeof train>>;
  beforeAll(async () => {
    // `fuel` repeats `gas`; `gas_cents` is gas in cents plus a constant (collinear); `country` is always 1.
    const csv = drivingCsv(['gas', 'fuel', 'gas_cents', 'country'], (r) => [String(r.gas), String(r.gas), (r.gas * 100 + 0.5).toFixed(1), '1']);
    result = await train(csv);
  }, ENGINE_TIMEOUT);

  it('leaves out a constant covariate and says so', () => {
    const said = "input 'country' has one value (1) in every known row: not used, it cannot tell the rows apart";
    expect(result.notes).toContain(said);
    expect(result.text).toContain(said);
    expectForecast(result.rows, 'miles', HIDDEN);
  });

  it('leaves out a duplicated covariate, naming both', () => {
    expect(result.notes).toContain("input 'fuel' has the same values as input 'gas' in every row: not used, 'gas' is");
    expectForecast(result.rows, 'miles', HIDDEN);
  });

  it('leaves out the later of two collinear covariates, naming both', () => {
    expect(result.notes).toContain("input 'gas_cents' moves with input 'gas' (correlation 1.0000 over the known rows): not used, 'gas' is");
    // The earlier of the two stays a feature.
    expect(result.notes.some((n) => n.startsWith("input 'gas' "))).toBe(false);
    expectForecast(result.rows, 'miles', HIDDEN);
  });
});

describe('a covariate of numbers with a few text cells', () => {
  it('reads the text cells as missing, keeps the column numeric and names their rows', { timeout: ENGINE_TIMEOUT }, async () => {
    const text = new Set([1960, 1975, 1990]);
    const csv = drivingCsv(['gas'], (r) => [text.has(r.year) ? 'n/a' : String(r.gas)]);
    const { rows, notes, text: record } = await train(csv);
    const said = "input 'gas' has 3 text cells among its numbers (1960, 1975 and 1990: 'n/a'): read as missing, the column kept numeric; each takes the column's last value before it, carried forward";
    expect(notes).toContain(said);
    expect(record).toContain(said);
    // Their rows are kept: no gap on the time axis.
    expect(notes.some((n) => n.includes('missing step'))).toBe(false);
    expectForecast(rows, 'miles', HIDDEN);
  });

  it('keeps a known row whose covariate cell is empty (it was skipped) and says what the cell reads', { timeout: ENGINE_TIMEOUT }, async () => {
    const csv = drivingCsv(['gas'], (r) => [r.year === 1975 || r.year === 1990 ? '' : String(r.gas)]);
    const { rows, notes, text } = await train(csv);
    const said = "input 'gas' is empty in 2 known rows (1975 and 1990): the rows are kept and each takes the column's last value before it, carried forward";
    expect(notes).toContain(said);
    expect(text).toContain(said);
    expect(notes.some((n) => n.includes('missing step'))).toBe(false);
    expectForecast(rows, 'miles', HIDDEN);
  });
});

describe('a panel whose covariate some series never fill', () => {
  it('forecasts the series without it and names them', { timeout: ENGINE_TIMEOUT }, async () => {
    interface Industry {
      series: string;
      year: number;
      month: number;
      count: number;
      rate: number;
    }
    const all = JSON.parse(readFileSync(join(VEGA_DATA, 'unemployment-across-industries.json'), 'utf8')) as Industry[];
    const names = ['Government', 'Construction', 'Manufacturing', 'Finance'];
    const without = new Set(['Construction', 'Finance']);
    const lines = ['industry,year,month,rate,unemployed'];
    for (const name of names) {
      const rows = all.filter((r) => r.series === name && r.year >= 2002).sort((a, b) => a.year - b.year || a.month - b.month).slice(0, 48);
      rows.forEach((r, i) => lines.push(`${name},${r.year},${r.month},${without.has(name) ? '' : r.rate},${i < 42 ? r.count : ''}`));
    }
    const { jobId } = await jobs.jobWithData(`${lines.join('\n')}\n`);
    await jobs.finished(jobId);
    const stat = await jobs.stat(jobId);
    const said = "input 'rate' is empty in every row of 2 of the 4 series (Construction and Finance): those series are forecast without it";
    expect((stat.Selection as { timeNotes?: string[] }).timeNotes).toContain(said);
    expect((await jobs.statusRecords(jobId))[0]?.text).toContain(said);
    const perSeries = new Map(stat.Selection?.panel?.perSeries.map((s) => [s.key[0], s]));
    for (const name of without) {
      // A model of its own (it was carried forward as "too short for a model", with 42 known rows).
      expect(perSeries.get(name)?.note).toBe("input 'rate' is empty in every row: left out, forecast without it");
      expect(perSeries.get(name)?.outputs.length).toBe(1);
    }
    expect(perSeries.get('Government')?.note ?? '').not.toContain('empty in every row');
    const rows = await jobs.output(jobId);
    for (const name of names) expectForecast(rows.filter((r) => r.industry === name), 'unemployed', 6);
  });
});
