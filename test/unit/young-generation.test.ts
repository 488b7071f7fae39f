import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * `npm start` gives the API thread a small young generation (--max-semi-space-size=4); threads a pool
 * starts after defaultYoungGenerationForNewThreads() get V8's default back (workers-support.ts).
 */
const support = pathToFileURL(new URL('../../src/workers-support.ts', import.meta.url).pathname).href;
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** New-space sizes in MB after each thread has churned through short-lived objects, under `npm start`'s flag. */
function newSpaces(restore: boolean): { main: number; worker: number } {
  const churn = `(() => { const v8 = require('node:v8'); let keep = [];
    for (let i = 0; i < 1e7; i++) { keep.push({ a: i }); if (keep.length > 300000) keep = []; }
    return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576; })()`;
  const script = `import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
const require = createRequire(import.meta.url);
const { defaultYoungGenerationForNewThreads } = await import(${JSON.stringify(support)});
if (${restore}) defaultYoungGenerationForNewThreads();
const worker = await new Promise((resolve, reject) => {
  const w = new Worker("require('node:worker_threads').parentPort.postMessage(" + ${JSON.stringify(churn)} + ")", { eval: true, execArgv: [] });
  w.once('message', resolve).once('error', reject);
});
console.log(JSON.stringify({ main: ${churn}, worker }));`;
  const out = execFileSync(process.execPath, ['--max-semi-space-size=4', '--import', tsx, '--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { main: number; worker: number };
}

describe('defaultYoungGenerationForNewThreads', () => {
  it("gives threads made after it V8's default young generation, and leaves the API thread's small one", () => {
    const flagOnly = newSpaces(false);
    expect(flagOnly.worker).toBeLessThanOrEqual(8);
    const restored = newSpaces(true);
    expect(restored.worker).toBeGreaterThan(8);
    expect(restored.main).toBeLessThanOrEqual(8);
  });
});
