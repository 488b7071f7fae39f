import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createTrainingPool, type TrainingPool } from '../../src/training/run/pool.js';

/** This process's thread ids (/proc/self/task): a training thread is one of them while it lives. */
const threadIds = () => new Set(readdirSync('/proc/self/task').map(Number));
const added = (before: Set<number>) => [...threadIds()].filter((tid) => !before.has(tid));

/** A unit that does next to nothing: the choice across no series. */
const emptyChoice = { kind: 'choose' as const, task: '{}', scores: [] };

describe.runIf(process.platform === 'linux')('training threads started ahead of the work (pool.ready)', () => {
  let pool: TrainingPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('starts every thread of the pool, and the units that follow run on them without starting more', async () => {
    const before = threadIds();
    pool = createTrainingPool({ maxThreads: 2 });
    await pool.ready();
    const started = added(before);
    expect(started.length).toBeGreaterThanOrEqual(2);
    await Promise.all([pool.runUnit(emptyChoice), pool.runUnit(emptyChoice)]);
    expect(added(before).sort()).toEqual(started.sort());
    // Asked again with every thread up, it starts none.
    await pool.ready();
    expect(added(before).sort()).toEqual(started.sort());
  });

  it('starts nothing once the pool is closed', async () => {
    const closed = createTrainingPool({ maxThreads: 1 });
    await closed.close();
    const before = threadIds();
    await closed.ready();
    expect(added(before)).toEqual([]);
  });
});
