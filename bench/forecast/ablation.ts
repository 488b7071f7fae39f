/**
 * Does each model family earn its place? (issue 10) The engine is run in-process (no service, no peers) on
 * the corpus (datasets.ts corpusSets) and on the benchmark's four univariate time series, once with every
 * numeric family and once with each family left out. A family whose removal makes the corpus better only
 * adds selection noise: one more candidate that can win the backtest by chance.
 *
 *   npm run bench ablation                    or   npx tsx bench/forecast/ablation.ts
 *   BENCH_ABLATION=linear,network             leave out only these (default: each numeric family in turn;
 *                                             about 2 minutes per run on these 2 cores)
 *   BENCH_CORPUS_ONLY=regex                   only the corpus series whose id matches
 *
 * Roles and kinds are inferred as the service infers them (columns.ts defaultColumns; a column is numeric
 * when every non-empty cell matches the repository's NUMBER_PATTERN), but an in-process run's seed is
 * derived from the input without the App record's parameters, so single figures can differ a little from
 * `npm run bench corpus`: compare runs of this script with each other.
 */
import { trainModel } from '../../src/training/index.js';
import { familiesFor } from '../../src/training/testing.js';
import { geometricMean, ratio } from './corpus.js';
import { corpusSets, inputOf, SETS, type ForecastSet } from './datasets.js';
import { naiveScores, score } from './naive.js';

const ONLY = process.env.BENCH_CORPUS_ONLY ? new RegExp(process.env.BENCH_CORPUS_ONLY) : null;
const BENCHMARK_SERIES = ['co2', 'employment', 'sp500', 'globaltemp'];

interface Run {
  leftOut: string;
  /** Per corpus series: ours / best naive in hindsight. */
  ratios: Map<string, number>;
  benchmark: Map<string, number>;
}

function runWithout(leftOut: string, corpus: ForecastSet[], benchmark: ForecastSet[]): Run {
  const registry = familiesFor('numeric');
  const all = [...registry];
  // The registry is the engine's one list of candidates; the run edits it in place and puts it back.
  registry.splice(0, registry.length, ...all.filter((f) => f.name !== leftOut));
  try {
    const forecast = (set: ForecastSet) => score(set, trainModel(inputOf(set)).forecasts.map((f) => Number(f.values[set.target])));
    const ratios = new Map(corpus.map((set) => [set.id, ratio(forecast(set), Math.min(...Object.values(naiveScores(set))))]));
    return { leftOut, ratios, benchmark: new Map(benchmark.map((set) => [set.id, forecast(set)])) };
  } finally {
    registry.splice(0, registry.length, ...all);
  }
}

export async function benchAblation() {
  const corpus = corpusSets().filter((s) => !ONLY || ONLY.test(s.id));
  const benchmark = BENCHMARK_SERIES.map((id) => (SETS[id] as () => ForecastSet)());
  const families = familiesFor('numeric').map((f) => f.name);
  const leaveOut = process.env.BENCH_ABLATION ? process.env.BENCH_ABLATION.split(',') : families;
  const unknown = leaveOut.filter((name) => !families.includes(name));
  if (unknown.length > 0) throw new Error(`unknown families: ${unknown.join(', ')} (known: ${families.join(', ')})`);
  const sources = [...new Set(corpus.map((s) => s.id.split('.')[0] as string))];
  const lines = [
    `| left out | corpus: ours / best naive (${corpus.length}) | at or below it | ${sources.join(' | ')} | ${BENCHMARK_SERIES.map((id) => `benchmark ${id}`).join(' | ')} |`,
    `|---|---:|---:|${sources.map(() => '---:').join('|')}|${BENCHMARK_SERIES.map(() => '---:').join('|')}|`,
  ];
  for (const leftOut of ['(none)', ...leaveOut]) {
    const started = performance.now();
    const run = runWithout(leftOut, corpus, benchmark);
    const all = [...run.ratios.values()];
    const bySource = sources.map((source) => geometricMean(corpus.filter((s) => s.id.split('.')[0] === source).map((s) => run.ratios.get(s.id) as number)));
    const line = `| ${leftOut} | ${geometricMean(all).toFixed(3)} | ${all.filter((r) => r <= 1 + 1e-9).length} | ${bySource.map((g) => g.toFixed(3)).join(' | ')} | ${BENCHMARK_SERIES.map((id) => (run.benchmark.get(id) as number).toPrecision(4)).join(' | ')} |`;
    lines.push(line);
    console.log(`${line}   (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  console.log(`\n${lines.join('\n')}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchAblation();
}
