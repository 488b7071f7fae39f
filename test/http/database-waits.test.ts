import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrator.js';
import { factories } from '../support/factories.js';
import { CURRENT, createTestContext, multipart, type TestContext, type TestUser } from '../support/helper.js';

/**
 * Bounded database waits (docs/interface-notes.md): every database wait has a bound, and a request that
 * reaches one is answered at once with what happened and when to retry. The Postgres-only cases need a second
 * session (locks, other backends); the embedded database has one connection, whose wait is bounded the same
 * way.
 */
const onPostgres = process.env.TEST_DB_KIND === 'postgres';
const TZ = 'Europe/Madrid';

const LOCKED = 'Service unavailable: other work holds a lock on the data this request needs; try again in 5 seconds';
const SLOW = 'Service unavailable: the database took too long over this request; try again in 5 seconds';
const BUSY = 'Service unavailable: the database is busy (no connection came free in time); try again in 2 seconds';
const LOST = 'Service unavailable: the database cannot be reached; try again shortly';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** GET /sessions as another user's browser: the reply, how long it took, and its Retry-After. */
async function sessionCheck(ctx: TestContext, user: TestUser) {
  const started = Date.now();
  const res = await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${user.session}` });
  return { ms: Date.now() - started, http: res.statusCode, envelope: res.envelope, retryAfter: res.headers['retry-after'] };
}

/** A second session on the test's database, as an operator's psql would be. */
async function operatorSession(ctx: TestContext): Promise<pg.Client> {
  const { database } = (await ctx.database.pool!.query<{ database: string }>('select current_database() as database')).rows[0]!;
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString(), application_name: 'operator' });
  await client.connect();
  return client;
}

/**
 * Sessions on this database matching `condition`, seen now: inside a transaction (the operator's lock)
 * pg_stat_activity would otherwise answer the snapshot its first read took.
 */
async function activity(client: pg.Client, condition: string) {
  await client.query('select pg_stat_clear_snapshot()');
  const { rows } = await client.query<{ state: string; application_name: string }>(
    `select state, application_name from pg_stat_activity where datname = current_database() and ${condition}`,
  );
  return rows;
}

/** The service's sessions that are inside a transaction, with their state. */
const openTransactions = (client: pg.Client) => activity(client, `application_name like 'mtcs%' and xact_start is not null`);

/**
 * A service on its own database with `env`, a user and an operator's second session, for one describe block:
 * each test reads them from the returned object once beforeAll has run.
 */
function serviceWithOperator(env: Record<string, string>) {
  const setup = {} as { ctx: TestContext; operator: pg.Client; alice: TestUser };
  beforeAll(async () => {
    setup.ctx = await createTestContext({ env });
    setup.alice = await setup.ctx.createUser();
    setup.operator = await operatorSession(setup.ctx);
  });
  afterAll(async () => {
    await setup.operator?.end();
    await setup.ctx?.close();
  });
  return setup;
}

describe.skipIf(!onPostgres)('a held lock on Postgres', () => {
  const setup = serviceWithOperator({ DB_LOCK_TIMEOUT_MS: '1000', DB_STATEMENT_TIMEOUT_MS: '8000' });
  afterEach(async () => {
    await setup.operator.query('rollback');
  });

  it("answers another user's session check within the lock bound + 1 s while an operator holds ACCESS EXCLUSIVE on users, and serves it once the lock goes", async () => {
    const { ctx, operator, alice } = setup;
    await operator.query('begin');
    await operator.query('lock table users in access exclusive mode');
    const blocked = await sessionCheck(ctx, alice);
    expect(blocked.envelope).toEqual({ status: 1, data: LOCKED });
    expect(blocked.http).toBe(200);
    expect(blocked.retryAfter).toBe('5');
    expect(blocked.ms).toBeGreaterThanOrEqual(900);
    expect(blocked.ms).toBeLessThan(1000 + 1000);

    // More requests than the pool has connections: each is still answered, none waits for the lock's end.
    const burst = await Promise.all(Array.from({ length: 14 }, () => sessionCheck(ctx, alice)));
    for (const reply of burst) expect(reply.envelope).toEqual({ status: 1, data: LOCKED });
    // 10 connections: the last 4 wait for one to come free, then for the lock themselves: two waves, each
    // within the lock bound + 1 s (opening 9 new connections on a busy machine takes its share).
    expect(Math.max(...burst.map((r) => r.ms))).toBeLessThan(2 * (1000 + 1000));

    await operator.query('rollback');
    expect((await sessionCheck(ctx, alice)).envelope.status).toBe(0);
  });

  it('gives bulk work the long statement bound and requests the short one, each with a name in pg_stat_activity', async () => {
    const { ctx } = setup;
    const settings = `select current_setting('statement_timeout') as statement, current_setting('lock_timeout') as lock,
      current_setting('idle_in_transaction_session_timeout') as idle, current_setting('application_name') as name`;
    expect((await ctx.database.pool!.query(settings)).rows[0]).toEqual({ statement: '8s', lock: '1s', idle: '30s', name: 'mtcs' });
    expect((await ctx.database.bulkPool!.query(settings)).rows[0]).toEqual({ statement: '10min', lock: '1s', idle: '30s', name: 'mtcs bulk' });
  });
});

describe.skipIf(!onPostgres)('a statement over its bound on Postgres', () => {
  // The lock bound above the statement bound: the statement's own bound ends the wait.
  const setup = serviceWithOperator({ DB_LOCK_TIMEOUT_MS: '5000', DB_STATEMENT_TIMEOUT_MS: '800' });

  it('is cancelled at the statement bound and answered with the reason', async () => {
    const { ctx, operator, alice } = setup;
    await operator.query('begin');
    await operator.query('lock table users in access exclusive mode');
    try {
      const reply = await sessionCheck(ctx, alice);
      expect(reply.envelope).toEqual({ status: 1, data: SLOW });
      expect(reply.retryAfter).toBe('5');
      expect(reply.ms).toBeLessThan(800 + 1000);
    } finally {
      await operator.query('rollback');
    }
    expect((await sessionCheck(ctx, alice)).envelope.status).toBe(0);
  });
});

describe.skipIf(!onPostgres)("the service's connections ended by pg_terminate_backend", () => {
  const setup = serviceWithOperator({ DB_LOCK_TIMEOUT_MS: '5000' });

  it('answer the request in flight at once, and the next requests are served (5 rounds)', async () => {
    const { ctx, operator, alice } = setup;
    for (let round = 0; round < 5; round++) {
      await operator.query('begin');
      await operator.query('lock table users in access exclusive mode');
      const inFlight = sessionCheck(ctx, alice);
      await waitFor('the session check to wait for the lock', async () => {
        return (await activity(operator, `application_name = 'mtcs' and wait_event_type = 'Lock'`)).length > 0;
      });
      const terminatedAt = Date.now();
      await operator.query('select pg_stat_clear_snapshot()');
      const { rowCount } = await operator.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name like 'mtcs%'`,
      );
      expect(rowCount).toBeGreaterThan(0);
      const reply = await inFlight;
      expect(reply.envelope).toEqual({ status: 1, data: LOST });
      expect(reply.retryAfter).toBe('5');
      expect(Date.now() - terminatedAt).toBeLessThan(1000);
      await operator.query('rollback');

      for (let i = 0; i < 3; i++) expect((await sessionCheck(ctx, alice)).envelope.status).toBe(0);
    }
  });
});

describe.skipIf(!onPostgres)('a client that vanishes', () => {
  // The idle-in-transaction backstop at its default (30 s): a transaction left open would still be seen here.
  const setup = serviceWithOperator({ DB_LOCK_TIMEOUT_MS: '8000' });
  let port: number;
  beforeAll(async () => {
    await setup.ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (setup.ctx.app.server.address() as net.AddressInfo).port;
  });

  /** Sends a whole upload on a real socket; answers a function that drops the connection without reading. */
  async function sendUpload(fields: Record<string, string | number>, csv: string, options: { cutAfterBytes?: number } = {}) {
    const body = multipart(fields, [{ field: 'Servicefile', filename: 'data.csv', content: csv }]);
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(
      `POST ${CURRENT}/data.php?tz=${TZ} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${body.headers['content-type']}\r\nContent-Length: ${body.payload.length}\r\n\r\n`,
    );
    socket.write(options.cutAfterBytes === undefined ? body.payload : body.payload.subarray(0, options.cutAfterBytes));
    return () => socket.destroy();
  }

  it('in the middle of its body leaves no transaction open, before or after it goes', async () => {
    const { ctx, operator, alice } = setup;
    const { jobId } = await factories(ctx.database.db).job(alice);
    const csv = `year,month,demand\n${Array.from({ length: 20_000 }, (_, i) => `${2000 + Math.floor(i / 12)},${(i % 12) + 1},${i % 97}`).join('\n')}\n`;
    const vanish = await sendUpload({ session: alice.session, job_id: jobId }, csv, { cutAfterBytes: 100_000 });
    await waitFor('the upload to reach the spool', async () => ctx.services.data.spool.usage().total > 50_000);
    // Nothing of the database waits on the client's bytes.
    expect(await openTransactions(operator)).toEqual([]);
    vanish();
    await waitFor('the spool to empty', async () => ctx.services.data.spool.usage().total === 0);
    expect(await openTransactions(operator)).toEqual([]);
  });

  it('while its upload waits for a lock inside the transaction leaves no `idle in transaction` session', async () => {
    const { ctx, operator, alice } = setup;
    const { jobId } = await factories(ctx.database.db).job(alice);
    // The upload's swap locks the job's row: an operator holds it first.
    await operator.query('begin');
    await operator.query('select id from jobs where id = $1 for update', [jobId]);
    try {
      const vanish = await sendUpload({ session: alice.session, job_id: jobId }, 'year,month,demand\n2020,1,5\n2020,2,6\n');
      await waitFor('the upload to wait for the job inside its transaction', async () => {
        return (await activity(operator, `application_name = 'mtcs bulk' and wait_event_type = 'Lock'`)).length > 0;
      });
      vanish();
      await sleep(200);
    } finally {
      await operator.query('commit');
    }
    // The server finishes (or rolls back) the transaction by itself; nothing stays open.
    await waitFor('the upload transaction to end', async () => (await openTransactions(operator)).length === 0, 5_000);
    await sleep(500);
    expect(await openTransactions(operator)).toEqual([]);
  });
});

describe.skipIf(!onPostgres)('a transaction left open', () => {
  const setup = serviceWithOperator({ DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '500' });

  it('is backed by idle_in_transaction_session_timeout: a transaction left open is ended by the server at its bound', async () => {
    const { ctx, operator, alice } = setup;
    const client = await ctx.database.pool!.connect();
    try {
      await client.query('begin');
      await client.query('select 1');
      expect(await openTransactions(operator)).toEqual([{ state: 'idle in transaction', application_name: 'mtcs' }]);
      await waitFor('the server to end the idle transaction', async () => (await openTransactions(operator)).length === 0, 3_000);
      await expect(client.query('select 1')).rejects.toThrow();
    } finally {
      client.release(true);
    }
    // The pool serves the next requests with fresh connections.
    for (let i = 0; i < 3; i++) expect((await sessionCheck(ctx, alice)).envelope.status).toBe(0);
  });
});

describe('the wait for a database connection', () => {
  let ctx: TestContext;
  let alice: TestUser;
  beforeAll(async () => {
    ctx = await createTestContext({ env: { DB_CONNECTION_WAIT_MS: '500' } });
    alice = await ctx.createUser();
  });
  afterAll(async () => ctx?.close());

  it('ends at its bound with the busy answer while every connection is held, and the next request after is served', async () => {
    let releaseAll!: () => void;
    const held = new Promise<void>((resolve) => (releaseAll = resolve));
    const holders: Promise<unknown>[] = [];
    if (ctx.database.kind === 'pglite') {
      // The embedded database's one connection, held as a long transaction would hold it.
      holders.push(ctx.database.db.connection().execute(() => held));
    } else {
      const clients = await Promise.all(Array.from({ length: 10 }, () => ctx.database.pool!.connect()));
      holders.push(held.then(() => clients.forEach((client) => client.release())));
    }
    try {
      await sleep(50);
      const reply = await sessionCheck(ctx, alice);
      expect(reply.envelope).toEqual({ status: 1, data: BUSY });
      expect(reply.http).toBe(200);
      expect(reply.retryAfter).toBe('2');
      expect(reply.ms).toBeGreaterThanOrEqual(450);
      expect(reply.ms).toBeLessThan(500 + 1000);
    } finally {
      releaseAll();
      await Promise.all(holders);
    }
    expect((await sessionCheck(ctx, alice)).envelope.status).toBe(0);
  });

  // pg-pool's own queue on Postgres; the embedded database's line is ours.
  it.skipIf(onPostgres)('keeps the order of those waiting on the embedded database: one that gave up does not let a later one in ahead', async () => {
    const order: string[] = [];
    let releaseFirst!: () => void;
    const first = ctx.database.db.connection().execute(() => new Promise<void>((resolve) => (releaseFirst = resolve)).then(() => void order.push('first')));
    const gaveUp = sessionCheck(ctx, alice);
    // Late enough that its own wait outlasts the first holder once the session check has given up.
    await sleep(300);
    const third = ctx.database.db.connection().execute(async () => void order.push('third'));
    expect((await gaveUp).envelope).toEqual({ status: 1, data: BUSY });
    expect(order).toEqual([]);
    releaseFirst();
    await Promise.all([first, third]);
    expect(order).toEqual(['first', 'third']);
    expect((await sessionCheck(ctx, alice)).envelope.status).toBe(0);
  });
});

describe.skipIf(!onPostgres)('migrations beside a held lock', () => {
  let ctx: TestContext;
  let operator: pg.Client;
  let dir: string;
  beforeAll(async () => {
    ctx = await createTestContext({ env: { DB_LOCK_TIMEOUT_MS: '400' } });
    operator = await operatorSession(ctx);
    dir = await mkdtemp(path.join(os.tmpdir(), 'mtcs-migrations-'));
  });
  afterAll(async () => {
    await operator?.end();
    await ctx?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('try a migration again when its table lock wait reaches the lock bound, and name it after the last try', async () => {
    await writeFile(path.join(dir, '9001_touch_users.sql'), '-- why: a test\nalter table users add column waits_test integer;\n');
    await operator.query('begin');
    await operator.query('lock table users in access share mode');
    // Held over two tries (400 ms each), let go before the third.
    const released = sleep(1000).then(() => operator.query('commit'));
    expect(await migrate(ctx.database, dir)).toEqual(['9001_touch_users.sql']);
    await released;

    await writeFile(path.join(dir, '9002_touch_users_again.sql'), '-- why: a test\nalter table users drop column waits_test;\n');
    await operator.query('begin');
    await operator.query('lock table users in access share mode');
    try {
      await expect(migrate(ctx.database, dir)).rejects.toThrow(
        /^Migration 9002_touch_users_again\.sql failed: canceling statement due to lock timeout \(5 times: another session holds a lock it needs\)$/,
      );
    } finally {
      await operator.query('rollback');
    }
  });

  it('wait for another process applying migrations past the lock bound (the long bound)', async () => {
    await operator.query('select pg_advisory_lock(724119001)');
    const released = sleep(1000).then(() => operator.query('select pg_advisory_unlock(724119001)'));
    const started = Date.now();
    expect(await migrate(ctx.database, dir)).toEqual(['9002_touch_users_again.sql']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    await released;
  });
});
