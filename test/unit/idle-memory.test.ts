import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The API thread keeps V8's default young generation (fast under load) and gives it back once idle
 * (src/idle-memory.ts; docs/benchmarks.md, footprint): a process that grew it and then went quiet ends with a
 * small one.
 */
const idleMemory = pathToFileURL(new URL('../../src/idle-memory.ts', import.meta.url).pathname).href;
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

function newSpaceAfterIdle(giveBack: boolean): { grown: number; idle: number; gcExposed: boolean } {
  const script = `import v8 from 'node:v8';
const { returnYoungGenerationWhenIdle } = await import(${JSON.stringify(idleMemory)});
const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
let keep = [];
for (let i = 0; i < 1e7; i++) { keep.push({ a: i }); if (keep.length > 300000) keep = []; }
keep = [];
const grown = newSpace();
if (${giveBack}) returnYoungGenerationWhenIdle({ intervalMs: 250, quietIntervals: 24 });
await new Promise((resolve) => setTimeout(resolve, 7500));
console.log(JSON.stringify({ grown, idle: newSpace(), gcExposed: typeof globalThis.gc === 'function' }));`;
  const out = execFileSync(process.execPath, ['--import', tsx, '--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { grown: number; idle: number; gcExposed: boolean };
}

// Two processes each wait 7.5 s of quiet after their start (tsx) and a 10M-object loop: 23 s on a quiet 2-core
// machine, past 30 s when the machine is busy.
describe('returnYoungGenerationWhenIdle', () => {
  it('brings a grown young generation back to a small one after 6 s of quiet, without exposing gc', () => {
    const kept = newSpaceAfterIdle(false);
    expect(kept.grown).toBeGreaterThan(8);
    expect(kept.idle).toBeGreaterThan(8);
    const given = newSpaceAfterIdle(true);
    expect(given.grown).toBeGreaterThan(8);
    expect(given.idle).toBeLessThanOrEqual(4);
    expect(given.gcExposed).toBe(false);
  }, 90_000);
});
