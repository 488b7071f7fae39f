import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DatabaseHandle } from './handle.js';

/** The repository's migrations/ folder, from src/db (tsx) and from dist/src/db (compiled) alike. */
export function defaultMigrationsDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../../migrations'), path.resolve(here, '../../../migrations')];
  return candidates.find((dir) => existsSync(path.join(dir, '0001_accounts.sql'))) ?? candidates[0]!;
}

export async function listMigrations(dir = defaultMigrationsDir()): Promise<string[]> {
  const files = await readdir(dir);
  return files.filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
}

const LOCK_KEY = 724_119_001;
const LOCK_NOT_AVAILABLE = '55P03';
const LOCK_ATTEMPTS = 5;
const CREATE_TABLE = `create table if not exists schema_migrations (
  name text primary key,
  applied_at timestamptz not null default now()
)`;

/**
 * Applies numbered SQL files in order, each in its own transaction, recording each in
 * schema_migrations. On Postgres one dedicated connection of the bulk pool (the long statement bound)
 * holds an advisory lock, so several processes starting together apply each file once. Applied files
 * are never edited.
 */
export async function migrate(handle: DatabaseHandle, dir = defaultMigrationsDir()): Promise<string[]> {
  const files = await listMigrations(dir);
  if (handle.bulkPool) {
    const client = await handle.bulkPool.connect();
    try {
      // Another process applying migrations holds the advisory lock for as long as they take: this wait
      // gets the long bound, not a request's lock bound.
      const waitMs = handle.bounds?.longStatementTimeoutMs ?? 0;
      await client.query(`select set_config('lock_timeout', '${Math.trunc(waitMs)}', false)`);
      try {
        await client.query(`select pg_advisory_lock(${LOCK_KEY})`);
      } finally {
        await client.query('reset lock_timeout');
      }
      return await applyPending(
        async (text) => void (await client.query(text)),
        async () => (await client.query<{ name: string }>('select name from schema_migrations')).rows,
        files,
        dir,
      );
    } finally {
      await client.query(`select pg_advisory_unlock(${LOCK_KEY})`).catch(() => undefined);
      client.release();
    }
  }
  return applyPending(
    (text) => handle.execScript(text),
    async () => (await handle.pglite!.query<{ name: string }>('select name from schema_migrations')).rows,
    files,
    dir,
  );
}

async function applyPending(
  exec: (text: string) => Promise<void>,
  appliedNames: () => Promise<{ name: string }[]>,
  files: string[],
  dir: string,
): Promise<string[]> {
  await exec(CREATE_TABLE);
  const done = new Set((await appliedNames()).map((r) => r.name));
  const applied: string[] = [];
  for (const file of files) {
    if (done.has(file)) continue;
    const body = await readFile(path.join(dir, file), 'utf8');
    for (let attempt = 1; ; attempt++) {
      try {
        await exec(`begin;\n${body}\n;\ninsert into schema_migrations (name) values ('${file}');\ncommit;`);
        break;
      } catch (error) {
        await exec('rollback').catch(() => undefined);
        // A table lock waits only the lock bound (requests queue behind the waiting migration meanwhile);
        // another request's short lock is usually gone at the next try.
        if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE && attempt < LOCK_ATTEMPTS) continue;
        const why = (error as { code?: string }).code === LOCK_NOT_AVAILABLE ? ` (${LOCK_ATTEMPTS} times: another session holds a lock it needs)` : '';
        throw new Error(`Migration ${file} failed: ${(error as Error).message}${why}`, { cause: error });
      }
    }
    applied.push(file);
  }
  return applied;
}

/** True when every migration file has been applied (readiness check). */
export async function migrationsCurrent(handle: DatabaseHandle, dir = defaultMigrationsDir()): Promise<boolean> {
  const files = await listMigrations(dir);
  const rows = await handle.db.selectFrom('schema_migrations').select('name').execute();
  const done = new Set(rows.map((r) => r.name));
  return files.every((f) => done.has(f));
}
