/**
 * The open database's type, apart from database.ts that opens it: the migrator (which database.ts reaches
 * through the embedded template) takes a handle without importing the module that makes one.
 */
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { DatabaseBounds } from '../config.js';
import type { EmbeddedPostgres } from './pglite-create.js';
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
  /** The pg pool of requests (postgres kind only): Kysely's, and the session check's prepared statement. */
  readonly pool: pg.Pool | undefined;
  /**
   * The pg pool of bulk work (postgres kind only), with the long statement bound: COPY in and out (an
   * upload, the training-set export), an upload's swap, migrations.
   */
  readonly bulkPool: pg.Pool | undefined;
  /** The bounds its connections were opened with; undefined: none (a tool's or a test template's database). */
  readonly bounds: DatabaseBounds | undefined;
  /** The embedded database (pglite kind only): PGlite in its worker thread, or in this one (PGLITE_IN_WORKER=0). */
  readonly pglite: EmbeddedPostgres | undefined;
  /**
   * A read-only statement without taking the embedded database's one connection (pglite kind only):
   * reads from many requests follow each other on its thread without a round trip between them.
   */
  readonly read?: <R>(sql: string, params: readonly unknown[]) => Promise<R[]>;
  close(): Promise<void>;
}
