import { readFileSync, unlinkSync } from 'node:fs';
import { link, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../config.js';

/**
 * One process at a time opens an embedded (PGlite) data directory: a second one would write to its own
 * copy in memory and lose it (the admin CLI next to a running server reported success for users the
 * server never saw). Like Postgres's postmaster.pid, the holder's pid and process start time sit in a
 * file next to the data; a lock whose process is gone (or whose pid now belongs to another process) is
 * taken over. A lock written on another host (a container sharing the volume) cannot be checked that
 * way: it counts while its holder keeps touching it.
 */

export class DatabaseLockedError extends ConfigError {}

interface Holder {
  pid: number;
  host: string;
  /** Process start time in clock ticks since boot (/proc/<pid>/stat), telling a reused pid apart. */
  startTicks: string | null;
  startedAt: string;
  process: string;
}

const HEARTBEAT_MS = 10_000;
const FOREIGN_STALE_MS = 60_000;

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses), or null. */
function statFieldsOf(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** starttime (field 22). */
function startTicksOf(pid: number): string | null {
  return statFieldsOf(pid)?.[19] ?? null;
}

/** What the lock calls this process in the message another process prints. */
function processLabel(): string {
  const script = path.basename(process.argv[1] ?? '').replace(/\.[cm]?[jt]s$/, '');
  return { server: 'the service', worker: 'the worker', admin: 'the admin CLI', migrate: 'npm run migrate' }[script] ?? `process ${script || process.title}`;
}

async function holderAlive(holder: Holder, lockPath: string): Promise<boolean> {
  if (holder.host !== os.hostname()) {
    const { mtimeMs } = await stat(lockPath);
    return Date.now() - mtimeMs < FOREIGN_STALE_MS;
  }
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const fields = statFieldsOf(holder.pid);
  // A holder that exited but was never reaped (an init that does not reap; a restart under it must still
  // open the data directory) still answers signal 0: a zombie (state Z, or X while being reaped) holds
  // nothing any more.
  const state = fields?.[0];
  if (state === 'Z' || state === 'X') return false;
  const ticks = fields?.[19] ?? null;
  return !(holder.startTicks && ticks && ticks !== holder.startTicks);
}

function parse(raw: string): Holder | undefined {
  try {
    const value = JSON.parse(raw) as Holder;
    return typeof value.pid === 'number' && typeof value.host === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock of the embedded database in `pgdataDir` (the file `<pgdataDir>.lock`), or throws
 * DatabaseLockedError naming its holder. Answers the release function.
 */
export async function lockEmbeddedDatabase(pgdataDir: string): Promise<() => Promise<void>> {
  const lockPath = `${pgdataDir}.lock`;
  const dataDir = path.dirname(pgdataDir);
  const mine = `${JSON.stringify({
    pid: process.pid,
    host: os.hostname(),
    startTicks: startTicksOf(process.pid),
    startedAt: new Date().toISOString(),
    process: processLabel(),
  } satisfies Holder)}\n`;

  for (let attempt = 0; attempt < 5; attempt++) {
    // Written aside then linked: link fails if the lock exists, and a reader never sees half a file.
    const temp = `${lockPath}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await writeFile(temp, mine, { mode: 0o644 });
    try {
      await link(temp, lockPath);
      return held(lockPath, mine);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await unlink(temp).catch(() => undefined);
    }

    let raw: string;
    try {
      raw = await readFile(lockPath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    const holder = parse(raw);
    if (holder && (await holderAlive(holder, lockPath))) {
      const where = holder.host === os.hostname() ? '' : ` on host ${holder.host}`;
      throw new DatabaseLockedError(
        `${holder.process.replace(/^./, (c) => c.toUpperCase())} (pid ${holder.pid}${where}, since ${holder.startedAt}) holds the embedded database under ${dataDir}; stop it first, or use DATABASE_URL (if no such process runs, delete ${lockPath})`,
      );
    }
    // Stale: move it aside atomically, and put it back if what moved is not what was judged stale
    // (another process took over in between).
    const aside = `${lockPath}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      await rename(lockPath, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    const moved = await readFile(aside, 'utf8');
    if (moved !== raw) await link(aside, lockPath).catch(() => undefined);
    await unlink(aside);
  }
  throw new DatabaseLockedError(`Cannot take the lock of the embedded database under ${dataDir}: other processes keep taking it`);
}

function held(lockPath: string, mine: string): () => Promise<void> {
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(lockPath, now, now).catch(() => undefined);
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const ours = (raw: string) => raw === mine;
  // A process that exits without closing (a failed start, process.exit) leaves no lock behind.
  const onExit = () => {
    try {
      if (ours(readFileSync(lockPath, 'utf8'))) unlinkSync(lockPath);
    } catch {
      // Already gone.
    }
  };
  process.once('exit', onExit);
  return async () => {
    clearInterval(heartbeat);
    process.off('exit', onExit);
    try {
      if (ours(await readFile(lockPath, 'utf8'))) await unlink(lockPath);
    } catch {
      // Already gone.
    }
  };
}
