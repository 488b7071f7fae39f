import { sql, type Kysely } from 'kysely';
import type { Pool } from 'pg';
import type { DatabaseHandle } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { batchedLookup } from './session-lookups.js';

export interface ActiveSession {
  session_id: number;
  /** The sliding expiry was last written before `touchBefore`. */
  needs_touch: boolean;
  user_id: number;
  role: 'admin' | 'consumer';
  name: string;
  lastname: string;
  email: string;
  client_id: number | null;
}

/**
 * `lookup`: the session check's fastest path, when the database has one: on Postgres the pg pool (a named,
 * prepared statement), on the embedded database its pipelined read (database.ts DatabaseHandle.read). Either
 * way lookups arriving together go as one statement (session-lookups.ts).
 */
export function createSessionsRepository(db: Kysely<Database>, lookup?: { pool: Pool } | { read: NonNullable<DatabaseHandle['read']> }) {
  // Compiled once: building and compiling the query per request cost a measurable share of the
  // session check (bench/sessions). Parameters are bound per call in the order below.
  const activeSessionQuery = db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      's.token_hash',
      's.id as session_id',
      sql<boolean>`s.last_seen_at < ${sql.val('$touchBefore')}::timestamptz`.as('needs_touch'),
      'u.id as user_id',
      'u.role',
      'u.name',
      'u.lastname',
      'u.email',
      'u.client_id',
    ])
    .where(sql<boolean>`s.token_hash = any(${sql.val('$tokenHashes')}::text[])`)
    .where('s.expires_at', '>', sql<Date>`${sql.val('$now')}::timestamptz`)
    .where('s.ended_at', 'is', null)
    .where('u.is_enabled', '=', sql.lit(true))
    .compile();

  const lookups = batchedLookup<ActiveSession & { token_hash: string }>(async (tokenHashes, now, touchBefore) => {
    const parameters = [touchBefore.toISOString(), tokenHashes, now.toISOString()];
    if (lookup && 'pool' in lookup) {
      // A named statement is parsed and planned once per connection; Kysely sends unnamed ones.
      return (await lookup.pool.query<ActiveSession & { token_hash: string }>({ name: 'sessions.findActiveByTokenHash', text: activeSessionQuery.sql, values: parameters })).rows;
    }
    if (lookup) return lookup.read<ActiveSession & { token_hash: string }>(activeSessionQuery.sql, parameters);
    return (await db.executeQuery<ActiveSession & { token_hash: string }>({ ...activeSessionQuery, parameters })).rows;
  });

  return {
    async create(userId: number, tokenHash: string, expiresAt: Date): Promise<number> {
      const row = await db
        .insertInto('sessions')
        .values({ user_id: userId, token_hash: tokenHash, expires_at: expiresAt, ended_at: null })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    /**
     * The hot path of every authenticated call: one indexed lookup joined to an enabled user. Times go
     * as ISO text and come back as a boolean: serialising and parsing Date objects was a measurable
     * share of the session check (bench/sessions).
     */
    findActiveByTokenHash: (tokenHash: string, now: Date, touchBefore: Date): Promise<ActiveSession | undefined> => lookups.find(tokenHash, now, touchBefore),

    async extend(sessionId: number, now: Date, expiresAt: Date): Promise<void> {
      await db
        .updateTable('sessions')
        .set({ last_seen_at: now, expires_at: expiresAt })
        .where('id', '=', sessionId)
        .execute();
    },

    async end(sessionId: number, now: Date): Promise<void> {
      await db.updateTable('sessions').set({ ended_at: now }).where('id', '=', sessionId).execute();
    },

    async endAllForUser(userId: number, now: Date, exceptSessionId?: number): Promise<void> {
      let query = db
        .updateTable('sessions')
        .set({ ended_at: now })
        .where('user_id', '=', userId)
        .where('ended_at', 'is', null);
      if (exceptSessionId !== undefined) query = query.where('id', '<>', exceptSessionId);
      await query.execute();
    },
  };
}

export type SessionsRepository = ReturnType<typeof createSessionsRepository>;

export function createPasswordTokensRepository(db: Kysely<Database>) {
  return {
    async create(userId: number, tokenHash: string, expiresAt: Date): Promise<void> {
      await db.insertInto('password_tokens').values({ user_id: userId, token_hash: tokenHash, expires_at: expiresAt, used_at: null }).execute();
    },
    /** Marks the token used and answers its user, only if it was unused and unexpired (single use). */
    async consume(tokenHash: string, now: Date): Promise<number | undefined> {
      const row = await db
        .updateTable('password_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('user_id')
        .executeTakeFirst();
      return row?.user_id;
    },
  };
}

export function createAuthAttemptsRepository(db: Kysely<Database>) {
  return {
    /** Records one attempt at `at` (the service's clock), dropping that subject's rows older than `forgetBefore`. */
    async record(kind: 'login' | 'recovery', subject: string, at: Date, forgetBefore: Date, address: string | null = null): Promise<void> {
      await db.insertInto('auth_attempts').values({ kind, subject, address, created_at: at }).execute();
      await db.deleteFrom('auth_attempts').where('kind', '=', kind).where('subject', '=', subject).where('created_at', '<', forgetBefore).execute();
    },
    async countSince(kind: 'login' | 'recovery', subject: string, since: Date): Promise<number> {
      const row = await db
        .selectFrom('auth_attempts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('kind', '=', kind)
        .where('subject', '=', subject)
        .where('created_at', '>', since)
        .executeTakeFirstOrThrow();
      return row.n;
    },
    /** Failed logins since `since`: for the e-mail from anywhere, and from that one address. */
    async loginFailures(subject: string, address: string, since: Date): Promise<{ total: number; pair: number }> {
      const row = await db
        .selectFrom('auth_attempts')
        .select((eb) => [eb.fn.countAll<number>().as('total'), eb.fn.countAll<number>().filterWhere('address', '=', address).as('pair')])
        .where('kind', '=', 'login')
        .where('subject', '=', subject)
        .where('created_at', '>', since)
        .executeTakeFirstOrThrow();
      return { total: row.total, pair: row.pair };
    },
    /** When the `nth` newest failure of that pair since `since` happened: the pair frees up when it leaves the window. */
    async nthNewestPairFailure(subject: string, address: string, since: Date, nth: number): Promise<Date | undefined> {
      const row = await db
        .selectFrom('auth_attempts')
        .select('created_at')
        .where('kind', '=', 'login')
        .where('subject', '=', subject)
        .where('address', '=', address)
        .where('created_at', '>', since)
        .orderBy('created_at', 'desc')
        .offset(nth - 1)
        .limit(1)
        .executeTakeFirst();
      return row?.created_at;
    },
    async clearPair(subject: string, address: string): Promise<void> {
      await db.deleteFrom('auth_attempts').where('kind', '=', 'login').where('subject', '=', subject).where('address', '=', address).execute();
    },
  };
}
