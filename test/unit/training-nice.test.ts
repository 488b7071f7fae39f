import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createTrainingPool, type TrainingPool } from '../../src/training/run/pool.js';
import type { TrainingInput } from '../../src/training/core/types.js';

/** Nice value of every thread of this process, by thread id (/proc/self/task/<tid>/stat, field 19). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // Fields after the parenthesised command name: state is field 3, nice field 19.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    nices.set(Number(tid), Number(fields[16]));
  }
  return nices;
}

const input: TrainingInput = {
  header: ['x', 'y'],
  columns: [
    { name: 'x', role: 'input', kind: 'numeric' },
    { name: 'y', role: 'output', kind: 'numeric' },
  ],
  rows: Array.from({ length: 40 }, (_, i) => [String(i), String(2 * i + 1)]),
  params: { seed: 1, epochs: 5, layersRequested: 1 },
};

describe.runIf(process.platform === 'linux')('training thread priority (TRAINING_NICE)', () => {
  let pool: TrainingPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('runs the training threads niced by niceIncrement and leaves the event loop thread alone', async () => {
    const before = threadNices();
    pool = createTrainingPool({ maxThreads: 1, niceIncrement: 7 });
    await pool.train(input);
    const after = threadNices();
    // Idle pool threads live on (idleTimeout), so the trainer is among the threads that appeared.
    const added = [...after].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice);
    expect(added).toContain(before.get(process.pid)! + 7);
    expect(after.get(process.pid)).toBe(before.get(process.pid));
  });

  it('leaves the training threads at the process priority by default', async () => {
    const before = threadNices();
    pool = createTrainingPool({ maxThreads: 1 });
    await pool.train(input);
    const added = [...threadNices()].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice);
    expect(added.length).toBeGreaterThan(0);
    expect(added.every((nice) => nice === before.get(process.pid))).toBe(true);
  });
});
