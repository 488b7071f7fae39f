// Keeps dist/ current without paying for a compile on every start (issue 29): `npm install` (prepare)
// and `npm start` (prestart) both run this. It emits (`tsc --noCheck`, incremental) only when a source
// is newer than the last build, then makes the embedded database's template (src/db/embedded-template.ts)
// when it is missing or older than the migrations. Type checking stays in `npm run build` and CI.
// Plain JavaScript on purpose: it runs before anything is compiled, and a start must not load tsx.
/* global console, process, performance */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');
const server = join(root, 'dist', 'src', 'server.js');

/** Newest modification time under `path`; directories count too, so a deleted or renamed file is noticed. */
function newest(path) {
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let latest = info.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

function build(newestInput) {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) {
    // An install without dev dependencies: use what is built, or say what is missing.
    if (existsSync(server)) return;
    console.error('Cannot build: TypeScript is not installed (install dev dependencies, or run a built checkout)');
    process.exit(1);
  }
  // Stamped with the build's start: a source saved while it compiled is newer and builds again next
  // time (a source dated in the future, by a skewed clock, does not make every start compile).
  // Whole milliseconds up: a Date drops the fraction of a nanosecond mtime, which would leave the stamp a
  // hair older than its newest source and make every start compile again.
  const started = new Date(Math.max(Date.now(), Math.ceil(newestInput)));
  const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--noCheck'], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
  writeFileSync(stamp, '');
  utimesSync(stamp, started, started);
}

const newestInput = Math.max(...['src', 'tsconfig.json', 'tsconfig.build.json'].map((name) => newest(join(root, name))));
const built = statSync(stamp, { throwIfNoEntry: false })?.mtimeMs ?? 0;
if (!existsSync(server) || newestInput > built) build(newestInput);

// With DATABASE_URL the embedded database is not used. A template that cannot be made is no reason not
// to start: a new data directory is then made by initdb, as without a template.
if (!process.env.DATABASE_URL) {
  const template = await import(pathToFileURL(join(root, 'dist', 'src', 'db', 'embedded-template.js')).href);
  if (!(await template.templateCurrent())) {
    try {
      const started = performance.now();
      const marker = await template.buildEmbeddedTemplate();
      console.log(`Prepared the embedded database template (${marker.migrations.length} migrations) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } catch (error) {
      console.warn(`Could not prepare the embedded database template (new data directories will run initdb): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
