import { Worker } from 'node:worker_threads';
import type { FitContext, FitRows } from '../../src/training/models/model.js';
import { mulberry32 } from '../../src/training/core/prng.js';

/** A series as fit rows with no features, time = index. */
export const rowsOf = (series: number[]): FitRows => ({ time: series.map((_, i) => i), features: series.map(() => []), target: series });

/** The fit context of a time-ordered series with a season of `season` steps (the statistical families ignore the network's params). */
export const seasonContext = (season: number, horizon = 8): FitContext => ({
  info: { timeOrdered: true, frequency: 'other', season, periods: season > 1 ? [season] : [], horizon },
  seed: 1,
  params: { layersRequested: 0, learningRate: 0.1, epochs: 10, deviationTarget: 5 },
  featureNames: [],
  progress: () => {},
});

/**
 * A family's fit runs synchronously in a training thread; abort terminates the thread (pool.ts). The fit
 * must not sit in code V8 cannot interrupt. Starts a thread fitting `familyExport` of `modulePath` over and
 * over on the `rows` and `info` that `setup` (JavaScript, run in the thread) defines, waits until a fit is
 * under way, and answers how long terminate() took in ms.
 */
export async function terminateWhileFitting(modulePath: string, familyExport: string, setup: string): Promise<number> {
  const code = `
    const { parentPort } = require('node:worker_threads');
    (async () => {
      const { register } = await import('tsx/esm/api');
      register();
      const mod = await import(${JSON.stringify(modulePath)});
      const family = mod[${JSON.stringify(familyExport)}];
      ${setup}
      let reported = false;
      const progress = () => { if (!reported) { reported = true; parentPort.postMessage('fitting'); } };
      for (;;) family.fit(rows, { info, seed: 1, params: {}, featureNames: [], progress });
    })();
  `;
  const worker = new Worker(code, { eval: true });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  // Let it get deep into a fit first.
  await new Promise((r) => setTimeout(r, 300));
  const started = performance.now();
  await worker.terminate();
  return performance.now() - started;
}

/** Approximately normal noise (sum of 12 uniforms), seeded. */
export function noise(seed: number): () => number {
  const random = mulberry32(seed);
  return () => {
    let s = 0;
    for (let i = 0; i < 12; i++) s += random();
    return s - 6;
  };
}
