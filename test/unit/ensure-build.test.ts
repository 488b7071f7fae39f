import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * scripts/ensure-build.mjs (`npm start` must not recompile a built checkout: docs/benchmarks.md, first start)
 * in a throwaway checkout whose `tsc` is a stand-in that records each call and emits dist/src/server.js, so
 * the test sees exactly when a start would compile.
 */
const script = path.resolve(import.meta.dirname, '../../scripts/ensure-build.mjs');

const FAKE_TSC = `const fs = require('node:fs');
const path = require('node:path');
const root = process.cwd();
fs.appendFileSync(path.join(root, 'tsc-calls.log'), process.argv.slice(2).join(' ') + '\\n');
fs.mkdirSync(path.join(root, 'dist/src/db'), { recursive: true });
fs.writeFileSync(path.join(root, 'dist/src/server.js'), '');
fs.writeFileSync(path.join(root, 'dist/src/db/embedded-template.js'), 'export const templateCurrent = async () => true;\\n');
`;

let checkout: string;

function makeCheckout(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ensure-build-'));
  mkdirSync(path.join(dir, 'scripts'));
  copyFileSync(script, path.join(dir, 'scripts/ensure-build.mjs'));
  mkdirSync(path.join(dir, 'src/db'), { recursive: true });
  writeFileSync(path.join(dir, 'src/server.ts'), '');
  writeFileSync(path.join(dir, 'src/db/old.ts'), '');
  writeFileSync(path.join(dir, 'tsconfig.json'), '{}');
  writeFileSync(path.join(dir, 'tsconfig.build.json'), '{}');
  mkdirSync(path.join(dir, 'node_modules/typescript/bin'), { recursive: true });
  writeFileSync(path.join(dir, 'node_modules/typescript/bin/tsc'), FAKE_TSC);
  // Sources written "a minute ago", so that a build stamped now is newer than all of them.
  const past = new Date(Date.now() - 60_000);
  for (const name of ['src/server.ts', 'src/db/old.ts', 'src/db', 'src', 'tsconfig.json', 'tsconfig.build.json']) utimesSync(path.join(dir, name), past, past);
  return dir;
}

function start(): number {
  execFileSync(process.execPath, ['scripts/ensure-build.mjs'], { cwd: checkout, env: { ...process.env, DATABASE_URL: '' }, timeout: 20_000 });
  try {
    return readFileSync(path.join(checkout, 'tsc-calls.log'), 'utf8').trim().split('\n').length;
  } catch {
    return 0;
  }
}

describe('scripts/ensure-build.mjs', () => {
  afterEach(() => rmSync(checkout, { recursive: true, force: true }));

  it('compiles a checkout without dist once, emit only, then starts without compiling', () => {
    checkout = makeCheckout();
    expect(start()).toBe(1);
    expect(readFileSync(path.join(checkout, 'tsc-calls.log'), 'utf8').trim()).toBe('-p tsconfig.build.json --noCheck');
    expect(start()).toBe(1);
    expect(start()).toBe(1);
  }, 120_000);

  it('compiles again after a source, a tsconfig or a deleted file changed, and only then', () => {
    checkout = makeCheckout();
    expect(start()).toBe(1);
    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(checkout, 'src/server.ts'), later, later);
    expect(start()).toBe(2);
    expect(start()).toBe(2);
    utimesSync(path.join(checkout, 'tsconfig.build.json'), new Date(Date.now() + 10_000), new Date(Date.now() + 10_000));
    expect(start()).toBe(3);
    rmSync(path.join(checkout, 'src/db/old.ts'));
    utimesSync(path.join(checkout, 'src/db'), new Date(Date.now() + 15_000), new Date(Date.now() + 15_000));
    expect(start()).toBe(4);
    expect(start()).toBe(4);
  }, 180_000);

  it('compiles when dist was deleted even though the stamp is gone with it', () => {
    checkout = makeCheckout();
    expect(start()).toBe(1);
    rmSync(path.join(checkout, 'dist'), { recursive: true });
    expect(start()).toBe(2);
  }, 120_000);
});
