import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { lockEmbeddedDatabase } from './embedded-lock.js';
import { copyEmbeddedTemplate } from './embedded-template.js';
import { createPGlite, INT8_OID, NUMERIC_OID, toNumber, type EmbeddedOpenOptions, type EmbeddedPostgres } from './pglite-create.js';
import { PGliteDialect } from './pglite-dialect.js';
import { PGliteWorker } from './pglite-worker.js';
import type { DatabaseBounds } from '../config.js';
import type { DatabaseHandle } from './handle.js';
import type { Database } from './schema.js';

export type { DatabaseHandle, DatabaseKind } from './handle.js';

const numberParsingTypes = ((oid: number, format?: 'text' | 'binary'): unknown =>
  oid === INT8_OID || oid === NUMERIC_OID ? toNumber : (pg.types.getTypeParser(oid, format ?? 'text') as unknown)) as typeof pg.types.getTypeParser;

/** What the service's connections call themselves in pg_stat_activity, so an operator can tell them apart. */
export const APPLICATION_NAME = 'mtcs';
export const BULK_APPLICATION_NAME = 'mtcs bulk';

/**
 * `bounds` unset (test templates, benchmarks' seeding): Postgres's own defaults, no timeouts. Two pools
 * share the server: `pool` for requests (Kysely, the session check), `bulkPool` for bulk work, whose
 * statements may run for minutes but must still end.
 */
export function openPostgres(connectionString: string, options: { max?: number; bounds?: DatabaseBounds } = {}): DatabaseHandle {
  const { bounds } = options;
  const max = options.max ?? 10;
  const poolOf = (applicationName: string, poolMax: number, statementTimeoutMs: number | undefined) => {
    const pool = new pg.Pool({
      connectionString,
      max: poolMax,
      application_name: applicationName,
      // Sent in the start-up message: in force from the first statement, at no round trip. A lock wait
      // is as short for bulk work as for requests, since every request behind a waiting lock waits too.
      ...(bounds && {
        statement_timeout: statementTimeoutMs,
        lock_timeout: bounds.lockTimeoutMs,
        idle_in_transaction_session_timeout: bounds.idleInTransactionTimeoutMs,
      }),
      // Both a full pool and a server that stops answering (not refusing) end the wait: the request gets
      // the busy or unreachable envelope. TCP keep-alive notices dead idle connections.
      connectionTimeoutMillis: bounds?.connectionWaitMs ?? 10_000,
      keepAlive: true,
      types: { getTypeParser: numberParsingTypes },
    });
    // An idle client losing its server (restart, pg_terminate_backend) must not crash the process; the pool replaces it.
    pool.on('error', () => undefined);
    // Nor one checked out with no statement running (the server ending a transaction left idle past its
    // bound): pg-pool listens on idle clients only. Its next statement fails instead, and the pool drops it.
    pool.on('connect', (client) => client.on('error', () => undefined));
    return pool;
  };
  const pool = poolOf(APPLICATION_NAME, max, bounds?.statementTimeoutMs);
  const bulkPool = poolOf(BULK_APPLICATION_NAME, Math.max(2, Math.ceil(max / 2)), bounds?.longStatementTimeoutMs);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    db,
    pool,
    bulkPool,
    bounds,
    pglite: undefined,
    async execScript(sqlText) {
      await bulkPool.query(sqlText);
    },
    async close() {
      await Promise.all([db.destroy(), bulkPool.end()]);
    },
  };
}

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

/**
 * PGlite runs in a worker thread (pglite-worker.ts), so that its statements never hold the API's event
 * loop and its start (WebAssembly, the data directory) runs beside the loading of the API's modules;
 * `inWorker` false (PGLITE_IN_WORKER=0: benchmarks' comparisons) runs it on the calling thread.
 */
async function openEmbedded(options: EmbeddedOpenOptions, inWorker: boolean): Promise<EmbeddedPostgres> {
  if (!inWorker) return createPGlite(options);
  const pglite = new PGliteWorker(options);
  try {
    await pglite.waitReady;
  } catch (error) {
    await pglite.close().catch(() => undefined);
    throw error;
  }
  return pglite;
}

/** A data directory is opened by one process at a time (embedded-lock.ts); in-memory ones need no lock. */
export async function openPGlite(options: { dataDir?: string; loadDataDir?: Blob; bounds?: DatabaseBounds; inWorker?: boolean } = {}): Promise<DatabaseHandle> {
  let unlock: (() => Promise<void>) | undefined;
  let pglite: EmbeddedPostgres;
  try {
    if (options.dataDir) {
      const dir = path.resolve(options.dataDir);
      await mkdir(dir, { recursive: true });
      unlock = await lockEmbeddedDatabase(dir);
      // A new directory starts as a copy of the build's prepared one (embedded-template.ts), else by initdb.
      if (!options.loadDataDir && !existsSync(path.join(dir, 'PG_VERSION')) && !(await copyEmbeddedTemplate(dir))) await initDataDir(dir);
    }
    pglite = await openEmbedded({ dataDir: options.dataDir, loadDataDir: options.loadDataDir }, options.inWorker ?? process.env.PGLITE_IN_WORKER !== '0');
  } catch (error) {
    await unlock?.();
    throw error;
  }
  // Only the wait for its one connection applies: nothing interrupts a statement the embedded server
  // runs, and no other session can hold a lock or leave a transaction open.
  const dialect = new PGliteDialect(pglite, { waitMs: options.bounds?.connectionWaitMs });
  const db = new Kysely<Database>({ dialect });
  return {
    kind: 'pglite',
    db,
    pool: undefined,
    bulkPool: undefined,
    bounds: options.bounds,
    pglite,
    read: (sql, params) => dialect.read(sql, params),
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
export async function openDatabase(config: { databaseUrl: string | undefined; dataDir: string; database: DatabaseBounds }): Promise<DatabaseHandle> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, { bounds: config.database });
  return openPGlite({ dataDir: path.join(config.dataDir, 'pgdata'), bounds: config.database });
}
