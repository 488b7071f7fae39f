import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

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
