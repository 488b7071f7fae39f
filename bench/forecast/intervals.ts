/**
 * Are the 80% and 95% prediction intervals what they say? (issue 10) The engine is run in-process on every
 * real numeric set with held-out rows: the corpus (datasets.ts corpusSets), the benchmark's numeric sets
 * but flights, and longHorizonSets (births per day with 120 or 365 days empty, both cities' weather with
 * temp_min or wind as the output), where a width is estimated for hundreds of horizon steps.
 *
 * Per series: the share of hidden rows inside each interval (the nominal level is the baseline), and the
 * interval score of Gneiting and Raftery (2007), the M4 competition's measure of an interval: its width
 * plus 2/alpha times the distance by which the truth falls outside; lower is better, and only a width near
 * the right quantile minimises it. Compare two revisions by the geometric mean of their scores' ratios
 * (the scores are written to bench/.out/intervals.json), and by M4's own aggregate: the mean over series of
 * the mean scaled interval score (MSIS: the score over the in-sample MAE of the seasonal naive, lag 1 for
 * series without a season), where a band far off its truth weighs by how far, not only by a ratio.
 *
 *   npm run bench intervals                   or   npx tsx bench/forecast/intervals.ts
 *   BENCH_CORPUS_ONLY=regex                   only the series whose id matches
 *   BENCH_INTERVALS_BEFORE=file.json          also print ratios against the scores of an earlier run
 *   BENCH_INTERVALS_OUT=file.json             write the scores there instead (two runs side by side)
 *
 * Last, the cost of the widths on a 20,000-step horizon (a 100,000-row hourly upload with its last 20%
 * empty), against one sort of the same errors in the same run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { trainModel, type TrainingResult } from '../../src/training/index.js';
import { intervalWidths, mulberry32 } from '../../src/training/testing.js';
import { geometricMean } from './corpus.js';
import { corpusSets, longHorizonSets, SETS, inputOf, type ForecastSet } from './datasets.js';
import { medianOf } from './naive.js';

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', '.out');
const ONLY = process.env.BENCH_CORPUS_ONLY ? new RegExp(process.env.BENCH_CORPUS_ONLY) : null;
const BENCHMARK_SETS = ['seattle', 'co2', 'employment', 'sp500', 'globaltemp', 'cars'];

export interface IntervalResult {
  id: string;
  group: 'corpus' | 'benchmark' | 'long horizon' | 'sub-daily';
  rows: number;
  horizon: number;
  cover80: number;
  cover95: number;
  score80: number;
  score95: number;
  /** MSIS's scale: the mean absolute seasonal difference of the known values. */
  scale: number;
}

export function msisScale(set: ForecastSet): number {
  const hidden = new Set(set.hidden);
  const known = set.y.filter((_, i) => !hidden.has(i)).map(Number);
  const lag = known.length > (set.time?.season ?? 1) ? (set.time?.season ?? 1) : 1;
  const diffs = known.slice(lag).map((v, i) => Math.abs(v - (known[i] as number)));
  const scale = diffs.reduce((a, b) => a + b, 0) / Math.max(1, diffs.length);
  return scale > 0 ? scale : 1;
}

const intervalScore = (lo: number, hi: number, y: number, alpha: number) =>
  hi - lo + (2 / alpha) * Math.max(0, lo - y) + (2 / alpha) * Math.max(0, y - hi);

function measure(set: ForecastSet, group: IntervalResult['group']): IntervalResult {
  return intervalsOf(set, group, trainModel(inputOf(set)));
}

/** Coverage and interval scores of one training's forecast of `set` (subdaily.ts reuses its own in-process run). */
export function intervalsOf(set: ForecastSet, group: IntervalResult['group'], result: TrainingResult): IntervalResult {
  const out = { id: set.id, group, rows: 0, horizon: result.selection?.horizon ?? 0, cover80: 0, cover95: 0, score80: 0, score95: 0, scale: msisScale(set) };
  result.forecasts.forEach((f, i) => {
    const interval = f.intervals?.[set.target];
    if (!interval) return;
    const y = set.truth[i] as number;
    const [lo80, hi80, lo95, hi95] = [interval.lo80, interval.hi80, interval.lo95, interval.hi95].map(Number) as [number, number, number, number];
    out.rows++;
    if (y >= lo80 && y <= hi80) out.cover80++;
    if (y >= lo95 && y <= hi95) out.cover95++;
    out.score80 += intervalScore(lo80, hi80, y, 0.2);
    out.score95 += intervalScore(lo95, hi95, y, 0.05);
  });
  if (out.rows === 0) throw new Error(`${set.id}: no intervals in the forecast`);
  for (const key of ['cover80', 'cover95', 'score80', 'score95'] as const) out[key] /= out.rows;
  return out;
}

export async function benchIntervals() {
  const groups: [IntervalResult['group'], ForecastSet[]][] = [
    ['corpus', corpusSets()],
    ['benchmark', BENCHMARK_SETS.map((id) => (SETS[id] as () => ForecastSet)())],
    ['long horizon', longHorizonSets()],
  ];
  const results: IntervalResult[] = [];
  for (const [group, sets] of groups) {
    for (const set of sets.filter((s) => !ONLY || ONLY.test(s.id))) {
      const r = measure(set, group);
      results.push(r);
      console.log(`${r.id}: ${r.rows} rows, horizon ${r.horizon}, 80% covers ${r.cover80.toFixed(2)}, 95% covers ${r.cover95.toFixed(2)}`);
    }
  }
  mkdirSync(OUT, { recursive: true });
  writeFileSync(process.env.BENCH_INTERVALS_OUT ?? join(OUT, 'intervals.json'), JSON.stringify(results, null, 1));

  const beforeFile = process.env.BENCH_INTERVALS_BEFORE;
  const before = beforeFile && existsSync(beforeFile) ? new Map((JSON.parse(readFileSync(beforeFile, 'utf8')) as IntervalResult[]).map((r) => [r.id, r])) : null;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const lines = [
    `| series | count | rows | 80% covers: pooled | mean per series | 95% covers: pooled | mean per series | MSIS 80% | MSIS 95%${before ? ' | interval score 80% / before (geometric mean, better, worse) | 95% / before | MSIS 80% / before | MSIS 95% / before' : ''} |`,
    `|---|---:|---:|---:|---:|---:|---:|---:|---:${before ? '|---:|---:|---:|---:' : ''}|`,
  ];
  for (const group of ['corpus', 'benchmark', 'long horizon', 'all'] as const) {
    const rs = results.filter((r) => group === 'all' || r.group === group);
    if (rs.length === 0) continue;
    const rows = rs.reduce((a, r) => a + r.rows, 0);
    const pooled = (key: 'cover80' | 'cover95') => rs.reduce((a, r) => a + r[key] * r.rows, 0) / rows;
    const versus = (key: 'score80' | 'score95') => {
      const ratios = rs.filter((r) => before?.has(r.id)).map((r) => r[key] / Math.max((before?.get(r.id) as IntervalResult)[key], 1e-12));
      return `${geometricMean(ratios).toFixed(3)} (${ratios.filter((x) => x < 0.999).length}, ${ratios.filter((x) => x > 1.001).length})`;
    };
    const msis = (key: 'score80' | 'score95', of: IntervalResult[]) => mean(of.map((r) => r[key] / r.scale));
    const old = rs.map((r) => before?.get(r.id)).filter((r): r is IntervalResult => r !== undefined && r.scale !== undefined);
    const msisVersus = (key: 'score80' | 'score95') => (old.length === rs.length ? (msis(key, rs) / msis(key, old)).toFixed(3) : '-');
    lines.push(
      `| ${group} | ${rs.length} | ${rows} | ${pooled('cover80').toFixed(3)} | ${mean(rs.map((r) => r.cover80)).toFixed(3)} | ${pooled('cover95').toFixed(3)} | ${mean(rs.map((r) => r.cover95)).toFixed(3)} | ${msis('score80', rs).toFixed(3)} | ${msis('score95', rs).toFixed(3)}${before ? ` | ${versus('score80')} | ${versus('score95')} | ${msisVersus('score80')} | ${msisVersus('score95')}` : ''} |`,
    );
  }
  console.log(`\nnominal: 0.800 and 0.950\n${lines.join('\n')}`);
  widthsCost();
}

/** Median of 5 timings of the widths of 3 windows x 20,000 steps, and of one sort of those 60,000 errors. */
function widthsCost() {
  const random = mulberry32(1);
  const errors = Array.from({ length: 20000 }, () => ({ errors: [random() - 0.5, random() - 0.5, random() - 0.5], windows: [0, 1, 2] }));
  const median = (fn: () => unknown) =>
    medianOf(
      Array.from({ length: 5 }, () => {
        const started = performance.now();
        fn();
        return performance.now() - started;
      }),
    );
  const widths = median(() => intervalWidths(errors));
  const sort = median(() => errors.flatMap((e) => e.errors).map(Math.abs).sort((a, b) => a - b));
  console.log(`\nwidths of a 20,000-step horizon: ${widths.toFixed(1)} ms, ${(widths / sort).toFixed(1)} x one sort of its 60,000 errors (${sort.toFixed(1)} ms)`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchIntervals();
}
