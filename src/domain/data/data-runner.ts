import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { CompiledQuery } from 'kysely';
import copyStreams from 'pg-copy-streams';
import type { DatabaseHandle } from '../../db/database.js';
import type { CsvDelimiter } from './csv-ingest.js';

export type Query = CompiledQuery<unknown>;

/**
 * Runs statements on one connection: inside an upload's transaction or on the pool. Everything else
 * in data.repository.ts is written once against it.
 */
export interface Runner {
  run<R = Record<string, unknown>>(query: Query): Promise<R[]>;
  copyIn(table: number, columns: number, delimiter: CsvDelimiter, lines: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<void>;
}

export const DELIMITER_SQL: Record<string, string> = { ',': "','", ';': "';'", '\t': "E'\\t'" };

function copySql(table: number, columns: number, delimiter: string, target: string): string {
  const list = Array.from({ length: columns }, (_, i) => `c${i + 1}`).join(', ');
  // COPY takes no parameters: the statement is built from integers and a whitelisted delimiter only.
  return `copy data_rows_${Math.trunc(table)} (${list}) from ${target} with (format text, delimiter ${DELIMITER_SQL[delimiter]})`;
}

/** PGlite reads COPY data from a Blob; batches keep memory bounded. */
const PGLITE_BATCH_BYTES = 8 * 1024 * 1024;

function pgliteRunner(database: DatabaseHandle, execute: (q: Query) => Promise<{ rows: unknown[] }>): Runner {
  const pglite = database.pglite!;
  return {
    async run<R>(query: Query) {
      return (await execute(query)).rows as R[];
    },
    async copyIn(table, columns, delimiter, lines) {
      const statement = copySql(table, columns, delimiter, `'/dev/blob'`);
      let parts: Buffer[] = [];
      let size = 0;
      const flush = async () => {
        if (size === 0) return;
        await pglite.query(statement, [], { blob: new Blob(parts) });
        parts = [];
        size = 0;
      };
      for await (const chunk of lines) {
        parts.push(chunk);
        size += chunk.length;
        if (size >= PGLITE_BATCH_BYTES) await flush();
      }
      await flush();
    },
  };
}

/** Statements on the pool; COPY only ever runs inside a transaction (inTransaction). */
export function createPoolRunner(database: DatabaseHandle): Runner {
  const db = database.db;
  return database.kind === 'pglite'
    ? // Through Kysely's driver, whose lock keeps these statements out of another request's transaction.
      pgliteRunner(database, async (q) => ({ rows: (await db.executeQuery(q)).rows }))
    : {
        async run<R>(query: Query) {
          return (await database.pool!.query(query.sql, query.parameters as unknown[])).rows as R[];
        },
        async copyIn() {
          throw new Error('COPY runs inside an upload transaction');
        },
      };
}

/** `work` in one transaction on one connection: Kysely's on PGlite, a bulk-pool client's on Postgres (COPY streams through it). */
export async function inTransaction<T>(database: DatabaseHandle, work: (runner: Runner) => Promise<T>): Promise<T> {
  if (database.kind === 'pglite') {
    return database.db.transaction().execute((trx) => work(pgliteRunner(database, (q) => trx.executeQuery(q))));
  }
  const client = await database.bulkPool!.connect();
  let healthy = true;
  try {
    await client.query('begin');
    const runner: Runner = {
      async run<R>(query: Query) {
        return (await client.query(query.sql, query.parameters as unknown[])).rows as R[];
      },
      async copyIn(table, columns, delimiter, lines) {
        const stream = client.query(copyStreams.from(copySql(table, columns, delimiter, 'stdin')));
        await pipeline(Readable.from(lines), stream);
      },
    };
    const result = await work(runner);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => (healthy = false));
    throw error;
  } finally {
    client.release(healthy ? undefined : true);
  }
}
