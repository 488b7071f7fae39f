import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { DatabaseLockedError, lockEmbeddedDatabase } from '../../src/db/embedded-lock.js';

const statFields = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
};

/**
 * A real zombie: a shell starts a child that exits at once, then becomes `sleep`, which never reaps it.
 * Answers the zombie's pid and the parent to end afterwards.
 */
async function zombie(): Promise<{ pid: number; parent: ChildProcess }> {
  const parent = spawn('sh', ['-c', '(exit 0) & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = await new Promise<number>((resolve, reject) => {
    let out = '';
    parent.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
    parent.once('exit', () => reject(new Error('the zombie parent exited')));
  });
  for (let i = 0; i < 200 && statFields(pid)[0] !== 'Z'; i++) await sleep(10);
  return { pid, parent };
}

describe('the embedded database lock (issue 35)', () => {
  let parent: ChildProcess | undefined;
  afterEach(() => {
    if (parent?.exitCode === null) parent.kill('SIGKILL');
  });

  it('takes over a lock whose holder exited but was never reaped (a zombie)', async () => {
    const made = await zombie();
    parent = made.parent;
    // What made the old check count it alive: the pid exists, answers signal 0 and keeps its start time.
    expect(statFields(made.pid)[0]).toBe('Z');
    expect(() => process.kill(made.pid, 0)).not.toThrow();
    const pgdata = path.join(await mkdtemp(path.join(os.tmpdir(), 'mtcs-lock-zombie-')), 'pgdata');
    const lockFile = `${pgdata}.lock`;
    try {
      writeFileSync(
        lockFile,
        JSON.stringify({ pid: made.pid, host: os.hostname(), startTicks: statFields(made.pid)[19], startedAt: '2026-01-01T00:00:00.000Z', process: 'the service' }),
      );
      const release = await lockEmbeddedDatabase(pgdata);
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, host: os.hostname() });
      await expect(lockEmbeddedDatabase(pgdata)).rejects.toThrow(DatabaseLockedError);
      await release();
      expect(existsSync(lockFile)).toBe(false);
    } finally {
      await rm(path.dirname(pgdata), { recursive: true, force: true });
    }
  });

  it('still refuses while its holder lives (the zombie\'s parent, asleep)', async () => {
    const made = await zombie();
    parent = made.parent;
    // The zombie's parent (sleep) is alive, state S: its lock holds.
    expect(statFields(made.parent.pid!)[0]).not.toBe('Z');
    const pgdata = path.join(await mkdtemp(path.join(os.tmpdir(), 'mtcs-lock-zombie-')), 'pgdata');
    try {
      writeFileSync(
        `${pgdata}.lock`,
        JSON.stringify({ pid: made.parent.pid, host: os.hostname(), startTicks: statFields(made.parent.pid!)[19], startedAt: '2026-01-01T00:00:00.000Z', process: 'the service' }),
      );
      await expect(lockEmbeddedDatabase(pgdata)).rejects.toThrow(`The service (pid ${made.parent.pid}, since 2026-01-01T00:00:00.000Z) holds the embedded database`);
    } finally {
      await rm(path.dirname(pgdata), { recursive: true, force: true });
    }
  });
});
