import type { PGlite } from '@electric-sql/pglite';

/**
 * The part of PGlite the service uses (src/db, the data repository, the migrator, the test template):
 * PGlite itself has it, and so does the proxy of one running in a worker thread (pglite-worker.ts).
 */
export interface EmbeddedPostgres {
  readonly waitReady: Promise<void>;
  readonly closed: boolean;
  /** `blob`: the data a COPY ... FROM '/dev/blob' reads; the answer's `blob`: what COPY ... TO '/dev/blob' wrote. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: { blob?: Blob }): Promise<{ rows: T[]; affectedRows?: number; blob?: Blob }>;
  /** A multi-statement script without parameters. */
  exec(sql: string): Promise<unknown>;
  dumpDataDir(compression?: 'none' | 'gzip' | 'auto'): Promise<Blob>;
  close(): Promise<void>;
  /** In a worker thread: settles with the reason if the thread stops without close(). */
  readonly lost?: Promise<Error>;
}

export interface EmbeddedOpenOptions {
  dataDir?: string;
  /** A data directory dump (dumpDataDir) to start from instead. */
  loadDataDir?: Blob;
}

/** int8 and numeric parse as JS numbers on both kinds of database, so counts and ids look the same. */
export const INT8_OID = 20;
export const NUMERIC_OID = 1700;
export const toNumber = (value: string) => Number(value);

/**
 * PGlite's initdb writes Postgres's default shared_buffers (128MB) into postgresql.conf, and the
 * embedded server touches all of it at start: ~120 MB of idle RSS. Its data files are read through the
 * OS (NODEFS), whose page cache already holds the hot pages, so a small buffer pool costs little; the
 * command-line setting also applies to data directories made before this change.
 */
const SHARED_BUFFERS = ['-c', 'shared_buffers=16MB'];

/**
 * Opens PGlite on the calling thread, ready. PGlite is loaded here, on first use: a thread that hands
 * the database to a worker (pglite-worker.ts) never loads it.
 */
export async function createPGlite(options: EmbeddedOpenOptions): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite');
  return PGlite.create({
    dataDir: options.dataDir,
    loadDataDir: options.loadDataDir,
    startParams: [...PGlite.defaultStartParams, ...SHARED_BUFFERS],
    parsers: { [INT8_OID]: toNumber, [NUMERIC_OID]: toNumber },
  });
}
