import type { CompiledQuery, Kysely } from 'kysely';
import type pg from 'pg';
import type { DatabaseHandle } from '../../db/database.js';
import type { Database } from '../../db/schema.js';

export type Query = CompiledQuery<unknown>;

/**
 * Runs statements on one connection: inside a transaction (an upload's, a training run's end) or on the pool. Everything else
 * in data.repository.ts is written once against it.
 */
export interface Runner {
  run<R = Record<string, unknown>>(query: Query): Promise<R[]>;
}

export const DELIMITER_SQL: Record<string, string> = { ',': "','", ';': "';'", '\t': "E'\\t'" };

/** Statements through Kysely: on the embedded database's connection, or inside a caller's Kysely transaction. */
export function kyselyRunner(executor: Kysely<Database>): Runner {
  return {
    async run<R>(query: Query) {
      return (await executor.executeQuery(query)).rows as R[];
    },
  };
}

/** Statements on the pool. */
export function createPoolRunner(database: DatabaseHandle): Runner {
  return database.kind === 'pglite'
    ? // Through Kysely's driver, whose lock keeps these statements out of another request's transaction.
      kyselyRunner(database.db)
    : {
        async run<R>(query: Query) {
          return (await database.pool!.query(query.sql, query.parameters as unknown[])).rows as R[];
        },
      };
}

/** `work` in one transaction on one connection: Kysely's on PGlite, a bulk-pool client's on Postgres (uploads stay off the requests' pool). */
export async function inTransaction<T>(database: DatabaseHandle, work: (runner: Runner) => Promise<T>): Promise<T> {
  if (database.kind === 'pglite') return database.db.transaction().execute((trx) => work(kyselyRunner(trx)));
  return inBulkTransaction(database, (client) =>
    work({
      async run<R>(query: Query) {
        return (await client.query(query.sql, query.parameters as unknown[])).rows as R[];
      },
    }),
  );
}

/**
 * `work` in one transaction on a client of Postgres's bulk pool (uploads stay off the requests' pool): rolled
 * back when it throws, and a client whose rollback failed is not handed back to the pool.
 */
export async function inBulkTransaction<T>(database: DatabaseHandle, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await database.bulkPool!.connect();
  let healthy = true;
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => (healthy = false));
    throw error;
  } finally {
    client.release(healthy ? undefined : true);
  }
}
