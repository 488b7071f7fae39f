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

const parents: ChildProcess[] = [];

/**
 * A real zombie: a shell starts a child that waits for the end of our pipe, then becomes `sleep`, which
 * never reaps. The pipe is closed only once the exec happened (a child exiting before it could be reaped
 * by the shell). Answers the zombie's pid and its parent.
 */
async function zombie(): Promise<{ pid: number; parent: ChildProcess }> {
  // A background list's stdin is /dev/null unless redirected: the child reads the pipe through fd 3.
  const parent = spawn('sh', ['-c', 'exec 3<&0; read line <&3 & echo $!; exec sleep 60'], { stdio: ['pipe', 'pipe', 'inherit'] });
  parents.push(parent);
  const pid = await new Promise<number>((resolve, reject) => {
    let out = '';
    parent.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
    parent.once('exit', () => reject(new Error('the zombie parent exited')));
  });
  for (let i = 0; i < 500 && readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim() !== 'sleep'; i++) await sleep(10);
  parent.stdin.end();
  for (let i = 0; i < 500 && statFields(pid)[0] !== 'Z'; i++) await sleep(10);
  return { pid, parent };
}

describe('the embedded database lock', () => {
  afterEach(() => {
    for (const parent of parents.splice(0)) if (parent.exitCode === null) parent.kill('SIGKILL');
  });

  it('takes over a lock whose holder exited but was never reaped (a zombie)', async () => {
    const made = await zombie();
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
