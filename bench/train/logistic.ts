/**
 * The logistic family vs scikit-learn's LogisticRegression() on the Palmer penguins (vega-datasets), same
 * split and features as test/unit/logistic.test.ts: rows with every measurement, every 4th row a test row,
 * the measurements standardised on the training rows. Not timed; prints one line per case with both
 * accuracies. Needs /usr/bin/python3 with python3-sklearn.
 *   npx tsx bench/train/logistic.ts
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logisticFamily } from '../../src/training/models/logistic.js';
import type { SeriesInfo } from '../../src/training/models/model.js';

const here = dirname(fileURLToPath(import.meta.url));
type Penguin = Record<string, string | number | null>;
const all = JSON.parse(readFileSync(join(here, '..', '..', 'node_modules', 'vega-datasets', 'data', 'penguins.json'), 'utf8')) as Penguin[];
const NUMERIC = ['Beak Length (mm)', 'Beak Depth (mm)', 'Flipper Length (mm)', 'Body Mass (g)'];

function split(columns: string[], species?: string[]) {
  const rows = all.filter((p) => columns.every((c) => p[c] !== null) && (!species || species.includes(p.Species as string)));
  const isTest = (i: number) => i % 4 === 3;
  const train = rows.filter((_, i) => !isTest(i));
  const stats = columns.map((c) => {
    const v = train.map((p) => p[c] as number);
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    return { c, mean, sd: Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length) };
  });
  const encode = (list: Penguin[]) => ({
    features: list.map((p) => stats.map(({ c, mean, sd }) => ((p[c] as number) - mean) / sd)),
    target: list.map((p) => p.Species as string),
  });
  return { train: encode(train), test: encode(rows.filter((_, i) => isTest(i))) };
}

const cases = [
  { name: 'penguins, 3 species, 4 measurements', ...split(NUMERIC) },
  { name: 'penguins, Adelie vs Gentoo, beak length + flipper', ...split(['Beak Length (mm)', 'Flipper Length (mm)'], ['Adelie', 'Gentoo']) },
  { name: 'penguins, 3 species, beak length + depth', ...split(['Beak Length (mm)', 'Beak Depth (mm)']) },
];
const info: SeriesInfo = { timeOrdered: false, frequency: 'none' as SeriesInfo['frequency'], season: 1, periods: [], horizon: 1 };
const accuracy = (p: string[], a: string[]) => p.filter((v, i) => v === a[i]).length / a.length;
const sklearn = JSON.parse(
  execFileSync('/usr/bin/python3', [join(here, 'logistic_sklearn.py')], { input: JSON.stringify({ cases }), encoding: 'utf8' }),
) as Record<string, { train: number; test: number; classes: string[]; coef: number[][] }>;
for (const c of cases) {
  const model = logisticFamily.fit(
    { time: c.train.target.map((_, i) => i), ...c.train },
    { info, seed: 1, params: { layersRequested: 0, learningRate: 0.05, epochs: 1, deviationTarget: 10 }, featureNames: [], progress: () => undefined },
  );
  const ours = {
    train: accuracy(model.predict({ time: [], features: c.train.features }) as string[], c.train.target),
    test: accuracy(model.predict({ time: [], features: c.test.features }) as string[], c.test.target),
  };
  const theirs = sklearn[c.name] as { train: number; test: number; classes: string[]; coef: number[][] };
  const coefDiff = Math.max(
    ...theirs.classes.flatMap((cls, k) => {
      const w = model.state.weights[model.state.classes.indexOf(cls)] as number[];
      return (theirs.coef[k] as number[]).map((v, j) => Math.abs(v - (w[j] as number)));
    }),
  );
  console.log(
    `${c.name} (${c.train.target.length} train / ${c.test.target.length} test rows): ours train ${ours.train.toFixed(4)} test ${ours.test.toFixed(4)}; ` +
      `scikit-learn train ${theirs.train.toFixed(4)} test ${theirs.test.toFixed(4)}; ${model.state.iterations} L-BFGS iterations, largest coefficient difference ${coefDiff.toExponential(1)}`,
  );
}
