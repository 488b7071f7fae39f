import { randomBytes } from 'node:crypto';
import { readdir, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * Files a process keeps on disk for as long as one request or training (the upload spool, the training
 * spool) are named `<host>.<pid>.<random>.<suffix>`, so a start can remove what a dead process of its own
 * host left, while several hosts may share the folder (a shared DATA_DIR volume): another host's files go
 * only once they are a day old, since its pids mean nothing here.
 */
const FOREIGN_STALE_MS = 24 * 60 * 60 * 1000;
const HOST = os.hostname().replace(/[^A-Za-z0-9-]/g, '_') || 'host';

/** Whether a process of this host still runs (EPERM: it does, under another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A new spool file's name for this process; `suffix` ends it (e.g. `copy`, `job-12.tsv`). */
export function spoolFileName(suffix: string): string {
  return `${HOST}.${process.pid}.${randomBytes(8).toString('hex')}.${suffix}`;
}

/** Removes the files of `dir` ending in `suffix` left by dead processes (this one's included, at its start); answers how many. */
export async function removeStaleSpoolFiles(dir: string, suffix: RegExp): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const pattern = new RegExp(`^(.+)\\.(\\d+)\\.[0-9a-f]+\\.${suffix.source}$`);
  let removed = 0;
  for (const name of names) {
    const match = pattern.exec(name);
    if (!match) continue;
    const file = path.join(dir, name);
    const pid = Number(match[2]);
    let stale = match[1] === HOST && (pid === process.pid || !isProcessAlive(pid));
    if (!stale && match[1] !== HOST) stale = Date.now() - (await stat(file).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs > FOREIGN_STALE_MS;
    if (stale && (await unlink(file).then(() => true).catch(() => false))) removed++;
  }
  return removed;
}
