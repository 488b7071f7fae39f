/**
 * Tabular sets on repeated k-fold (issue 23): cars (regression, MAE) and penguins (classification, error
 * rate), and since issue 23's boosting family penguins' body mass, cars' origin and gapminder's life expectancy; 2 repeats x
 * 5 folds (datasets.ts tabularFolds), the engine in-process (as ablation.ts) against scikit-learn's
 * linear/logistic regression, MLP and gradient boosting (peers.py) on the same folds. One split
 * swings: on cars the engine was 0.96x gradient boosting on one split and 1.14x on another.
 *
 *   npm run bench tabular                     or   npx tsx bench/forecast/tabular.ts
 *   BENCH_FORECAST_PEERS=cached               reuses the last run's peers (same folds, same peers.py)
 *   BENCH_TABULAR_SETS=cars,penguins          folds only these tables (ids as in the table)
 * Prints per data set the mean error over the 10 folds of each model and ours / each.
 */
import { trainModel } from '../../src/training/index.js';
import { tabularFolds, inputOf, type ForecastSet } from './datasets.js';
import { score } from './naive.js';
import { runPeers } from './run.js';

export async function benchTabular() {
  const sets = tabularFolds((process.env.BENCH_TABULAR_SETS ?? '').split(',').filter((id) => id !== ''));
  const ours = new Map<string, { error: number; model: string; seconds: number }>();
  for (const set of sets) {
    const started = performance.now();
    const r = trainModel(inputOf(set));
    const seconds = (performance.now() - started) / 1000;
    const out = r.selection?.outputs.find((o) => o.column === set.target);
    const predictions = r.forecasts.map((f) => (set.task === 'regression' ? Number(f.values[set.target]) : String(f.values[set.target])));
    ours.set(set.id, { error: score(set, predictions), model: out?.chosen ?? '-', seconds });
    console.log(`${set.id}: ours ${ours.get(set.id)?.error.toPrecision(4)} in ${seconds.toFixed(1)} s (${out?.description ?? '-'})`);
  }
  const peers = await runPeers(sets, 'tabular');
  const byData = new Map<string, ForecastSet[]>();
  for (const set of sets) byData.set(set.id.split('.')[0]!, [...(byData.get(set.id.split('.')[0]!) ?? []), set]);
  const lines = ['| data set | folds | ours | sklearn linear | sklearn MLP | sklearn GB | ours / GB (mean of folds) | folds where ours <= GB | ours / GB per fold (min-max) | ours s per fold |', '|---|---:|---:|---:|---:|---:|---:|---:|---|---:|'];
  for (const [name, group] of byData) {
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const peer = (set: ForecastSet, model: string) => {
      const p = peers[set.id]?.[model]?.pred;
      return p ? score(set, p, true) : NaN;
    };
    const o = group.map((s) => ours.get(s.id)!.error);
    const gb = group.map((s) => peer(s, 'gbr'));
    const ratios = o.map((v, i) => (v === 0 && gb[i] === 0 ? 1 : v / Math.max(gb[i]!, 1e-12)));
    const fmt = (v: number) => (group[0]!.task === 'classification' ? `${(v * 100).toFixed(2)}%` : v.toFixed(3));
    lines.push(
      `| ${name} | ${group.length} | ${fmt(mean(o))} | ${fmt(mean(group.map((s) => peer(s, 'linear'))))} | ${fmt(mean(group.map((s) => peer(s, 'mlp'))))} | ${fmt(mean(gb))} | ${(mean(o) / Math.max(mean(gb), 1e-12)).toFixed(3)} | ${o.filter((v, i) => v <= gb[i]! + 1e-12).length} / ${group.length} | ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)} | ${mean(group.map((s) => ours.get(s.id)!.seconds)).toFixed(1)} |`,
    );
  }
  console.log(`\n${lines.join('\n')}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchTabular();
}
