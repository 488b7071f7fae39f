import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { lockEmbeddedDatabase } from './embedded-lock.js';
import { copyEmbeddedTemplate } from './embedded-template.js';
import { PGliteDialect } from './pglite-dialect.js';
import type { Database } from './schema.js';

export type DatabaseKind = 'postgres' | 'pglite';

/**
 * An open database: the Kysely handle plus what only the raw driver can do (multi-statement scripts
 * for migrations, COPY for ingest). Both kinds parse int8 and numeric as JS numbers so that counts and
 * ids look the same whichever database runs.
 */
export interface DatabaseHandle {
  readonly kind: DatabaseKind;
  readonly db: Kysely<Database>;
  /** Runs a multi-statement SQL script without parameters (migrations). */
  execScript(sqlText: string): Promise<void>;
  /** The pg pool (postgres kind only), for COPY streams and LISTEN. */
  readonly pool: pg.Pool | undefined;
  /** The PGlite instance (pglite kind only). */
  readonly pglite: PGlite | undefined;
  close(): Promise<void>;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const toNumber = (value: string) => Number(value);

const numberParsingTypes = ((oid: number, format?: 'text' | 'binary'): unknown =>
  oid === INT8_OID || oid === NUMERIC_OID ? toNumber : (pg.types.getTypeParser(oid, format ?? 'text') as unknown)) as typeof pg.types.getTypeParser;

export function openPostgres(connectionString: string, options: { max?: number } = {}): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    // A server that stops answering (not refusing) must not hang requests: connecting gives up after
    // 10 s (the request gets the "database cannot be reached" envelope) and TCP keep-alive notices dead
    // idle connections. No per-query timeout: a large upload's COPY legitimately runs for minutes.
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    types: { getTypeParser: numberParsingTypes },
  });
  // An idle client losing its server (restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    db,
    pool,
    pglite: undefined,
    async execScript(sqlText) {
      await pool.query(sqlText);
    },
    async close() {
      await db.destroy();
    },
  };
}

/**
 * PGlite's initdb writes Postgres's default shared_buffers (128MB) into postgresql.conf, and the
 * embedded server touches all of it at start: ~120 MB of idle RSS. Its data files are read through the
 * OS (NODEFS), whose page cache already holds the hot pages, so a small buffer pool costs little; the
 * command-line setting also applies to data directories made before this change.
 */
const PGLITE_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/**
 * Creates a new data directory in a short-lived child process. PGlite runs initdb in a second wasm
 * instance plus the initdb module, ~430 MB that become garbage some time after the open and go back
 * only if V8 happens to run a major GC, which an idle server may not do for hours: a server that had
 * initialised its own directory idled at 460-830 MB against ~400 after a restart. A process that exits
 * returns all of it.
 */
export async function initDataDir(dataDir: string): Promise<void> {
  const pgliteUrl = import.meta.resolve('@electric-sql/pglite');
  const script = `const { PGlite } = await import(${JSON.stringify(pgliteUrl)});
await (await PGlite.create({ dataDir: process.argv[1] })).close();`;
  try {
    await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, dataDir], { maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`Cannot create the embedded database in ${dataDir}: ${stderr?.trim().split('\n').at(-1) || (error as Error).message}`, { cause: error });
  }
}

/** A data directory is opened by one process at a time (embedded-lock.ts); in-memory ones need no lock. */
export async function openPGlite(options: { dataDir?: string; loadDataDir?: Blob } = {}): Promise<DatabaseHandle> {
  let unlock: (() => Promise<void>) | undefined;
  let pglite: PGlite;
  try {
    if (options.dataDir) {
      const dir = path.resolve(options.dataDir);
      await mkdir(dir, { recursive: true });
      unlock = await lockEmbeddedDatabase(dir);
      // A new directory starts as a copy of the build's prepared one (embedded-template.ts), else by initdb.
      if (!options.loadDataDir && !existsSync(path.join(dir, 'PG_VERSION')) && !(await copyEmbeddedTemplate(dir))) await initDataDir(dir);
    }
    pglite = await PGlite.create({
      dataDir: options.dataDir,
      loadDataDir: options.loadDataDir,
      startParams: PGLITE_START_PARAMS,
      parsers: { [INT8_OID]: toNumber, [NUMERIC_OID]: toNumber },
    });
  } catch (error) {
    await unlock?.();
    throw error;
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return {
    kind: 'pglite',
    db,
    pool: undefined,
    pglite,
    async execScript(sqlText) {
      await pglite.exec(sqlText);
    },
    async close() {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
      await unlock?.();
    },
  };
}

/** DATABASE_URL set: that Postgres; unset: embedded PGlite stored under DATA_DIR/pgdata. */
export async function openDatabase(config: { databaseUrl: string | undefined; dataDir: string }): Promise<DatabaseHandle> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl);
  return openPGlite({ dataDir: path.join(config.dataDir, 'pgdata') });
}
