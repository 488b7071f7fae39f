import { describe, expect, it } from 'vitest';
import { threadCpuSeconds } from '../../src/training/run/thread-cpu.js';

/** A job's consumption record counts the training thread's CPU, not its wall time (thread-cpu.ts). */
describe('threadCpuSeconds', () => {
  it.skipIf(process.platform !== 'linux')('does not count a wait, and counts work', () => {
    const before = threadCpuSeconds()!;
    expect(before).toBeGreaterThan(0);
    // 400 ms asleep on this thread: a wall clock would count all of it.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400);
    const afterWait = threadCpuSeconds()!;
    expect(afterWait - before).toBeLessThan(0.1);

    // Busy until the thread's own clock has moved 0.2 s (bounded: a clock that never moves fails the test).
    const deadline = Date.now() + 20_000;
    let x = 0;
    while (threadCpuSeconds()! - afterWait < 0.2 && Date.now() < deadline) for (let i = 0; i < 1e5; i++) x += Math.sqrt(i);
    expect(x).toBeGreaterThan(0);
    expect(threadCpuSeconds()! - afterWait).toBeGreaterThanOrEqual(0.2);
  });
});
