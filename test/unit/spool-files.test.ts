import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeStaleSpoolFiles, spoolFileName } from '../../src/spool-files.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('spool files shared by several processes and hosts', () => {
  it('removes only what dead processes of this host left, and other hosts files once a day old', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spool-files-'));
    dirs.push(dir);
    const host = spoolFileName('x').split('.')[0];
    // A pid that surely ended: a child that already exited.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const touch = (name: string, ageMs = 0) => {
      writeFileSync(path.join(dir, name), 'x');
      const at = new Date(Date.now() - ageMs);
      utimesSync(path.join(dir, name), at, at);
    };
    touch(`${host}.${dead}.00ff.job-3.tsv`);
    touch(`${host}.${process.ppid}.00ff.job-4.tsv`);
    touch(`other-host.${dead}.00ff.job-5.tsv`);
    touch(`other-host.${dead}.00fe.job-6.tsv`, 2 * 24 * 60 * 60 * 1000);
    touch(`${host}.${dead}.00ff.copy`);
    touch('unrelated.txt');
    expect(await removeStaleSpoolFiles(dir, /job-\d+\.tsv/)).toBe(2);
    expect(readdirSync(dir).sort()).toEqual([`${host}.${dead}.00ff.copy`, `${host}.${process.ppid}.00ff.job-4.tsv`, `other-host.${dead}.00ff.job-5.tsv`, 'unrelated.txt'].sort());
  });
});
