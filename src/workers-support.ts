import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';

/**
 * A worker file for piscina, named without extension relative to `base` (the caller's import.meta.url):
 * compiled builds load the .js beside the caller; from TypeScript sources (vitest, tsx) there is no .js,
 * so the .ts is loaded with tsx's loader added to the worker's execArgv, because Node 20 cannot load .ts
 * in a worker by itself.
 */
export function resolveWorkerFile(base: string, name: string): { filename: string; execArgv?: string[] } {
  const js = new URL(`./${name}.js`, base);
  if (existsSync(fileURLToPath(js))) return { filename: fileURLToPath(js) };
  const ts = new URL(`./${name}.ts`, base);
  // An absolute loader URL, so it does not depend on the process cwd.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const inherited = process.execArgv;
  const hasTsx = inherited.some((arg) => arg.includes('tsx'));
  return { filename: fileURLToPath(ts), execArgv: hasTsx ? [...inherited] : [...inherited, '--import', tsx] };
}

/**
 * `npm start` used to run node with --max-semi-space-size=4 (an 8 MB young generation for the idle API
 * thread, which cost the session check CPU: docs/benchmarks.md, sessions; it now gives V8's default one back
 * when idle instead: src/idle-memory.ts). For a start with such a flag: V8 reads it whenever an isolate is
 * made, and training and chart threads, which allocate short-lived arrays fast, spent ~7% more CPU in
 * scavenges with it (a worker's resourceLimits cannot raise it). Threads made after this call get V8's
 * default again (16 MB semi-spaces on 64-bit); the API thread keeps the size it started with.
 */
export function defaultYoungGenerationForNewThreads(): void {
  v8.setFlagsFromString('--max-semi-space-size=16');
}
