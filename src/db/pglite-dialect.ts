import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import type { EmbeddedPostgres } from './pglite-create.js';

/**
 * The code of the error a wait for the embedded database's connection ends with: the error path answers
 * it as a busy database, like a full pg pool.
 */
export const CONNECTION_WAIT_TIMEOUT = 'connection_wait_timeout';

export class ConnectionWaitTimeout extends Error {
  readonly code = CONNECTION_WAIT_TIMEOUT;
  constructor(waitMs: number) {
    super(`No database connection came free within ${waitMs} ms`);
  }
}

/**
 * Kysely dialect for the embedded PGlite (in its worker thread or in process). PGlite is a single connection, so a transaction must own it
 * exclusively: connections are handed out one at a time through a FIFO lock. Queries outside a
 * transaction also take the lock, which keeps statement order identical to a one-connection pool.
 * `waitMs` bounds a wait in that line: a long holder (an upload's swap) must not hold every request
 * without an answer.
 */
export class PGliteDialect implements Dialect {
  private readonly driver: PGliteDriver;

  constructor(pglite: EmbeddedPostgres, options: { waitMs?: number } = {}) {
    this.driver = new PGliteDriver(pglite, options.waitMs);
  }
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return this.driver;
  }
  /** A read-only statement sent without taking the one connection (PGliteDriver.read). */
  read<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    return this.driver.read<R>(sql, params);
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: EmbeddedPostgres) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pglite.query<R>(compiled.sql, compiled.parameters as unknown[]);
    return {
      rows: result.rows,
      numAffectedRows: result.affectedRows === undefined ? undefined : BigInt(result.affectedRows),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite dialect does not support streaming queries');
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  private queue: Promise<void> = Promise.resolve();
  /** Acquisitions not yet released, holder and waiters (those that gave up leave when their turn passes). */
  private inLine = 0;
  private readonly releasers = new WeakMap<DatabaseConnection, () => void>();

  constructor(
    private readonly pglite: EmbeddedPostgres,
    private readonly waitMs: number | undefined,
  ) {
    this.connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {
    await this.pglite.waitReady;
  }

  /**
   * One read-only statement, sent to the database's thread without taking the connection: that thread runs
   * statements in arrival order, so reads sent back to back keep it busy instead of each waiting for the one
   * before to come back to this thread (the session check's lookups: docs/benchmarks.md, sessions). A read is
   * sent only while nobody holds the connection or waits for it: sent then, it could run inside another's
   * open transaction and abort it on an error. That wait has the connection wait's bound.
   */
  async read<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    if (this.inLine > 0) await this.untilFree();
    return (await this.pglite.query<R>(sql, params as unknown[])).rows;
  }

  /** Until no connection is held or waited for, within the connection wait's bound. */
  private async untilFree(): Promise<void> {
    const deadline = this.waitMs === undefined ? Infinity : performance.now() + this.waitMs;
    while (this.inLine > 0) {
      const left = deadline - performance.now();
      if (left <= 0) throw new ConnectionWaitTimeout(this.waitMs as number);
      if (left === Infinity) {
        await this.queue;
        continue;
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.queue, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const previous = this.queue;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    // Nobody holds the connection or waits for it (the common case): no timer to set.
    const free = this.inLine === 0;
    this.inLine++;
    const done = release;
    release = () => {
      this.inLine--;
      done();
    };
    if (this.waitMs === undefined || free) {
      await previous;
    } else {
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = await Promise.race([
        previous.then(() => false),
        new Promise<boolean>((resolve) => (timer = setTimeout(resolve, this.waitMs, true))),
      ]);
      clearTimeout(timer);
      if (gaveUp) {
        // The place in line stays: it passes its turn straight on, so those behind keep their order.
        void previous.then(release);
        throw new ConnectionWaitTimeout(this.waitMs);
      }
    }
    // Each acquisition gets its own wrapper object so the release function maps one-to-one.
    const conn = Object.create(this.connection) as PGliteConnection;
    this.releasers.set(conn, release);
    return conn;
  }

  async beginTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('begin'));
  }
  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }
  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    this.releasers.get(conn)?.();
    this.releasers.delete(conn);
  }
  async destroy(): Promise<void> {
    // The owner of the PGlite instance closes it (it may be shared, e.g. by the job queue).
  }
}
