import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGlite, type DatabaseHandle } from '../../src/db/database.js';
import { PGliteWorker } from '../../src/db/pglite-worker.js';

/**
 * The embedded database in its worker thread (issue 29, item 3): what crosses between the threads keeps
 * its types, codes and order, and a statement running there leaves this thread's event loop free.
 */
let handle: DatabaseHandle;
const pglite = () => handle.pglite!;

/** Timer ticks on this thread while `work` runs. */
async function ticksDuring(work: () => Promise<unknown>): Promise<number> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return ticks;
}

// Heavy enough to take hundreds of milliseconds on any machine: one statement, one wasm call.
const HEAVY = 'select count(*)::int as n from generate_series(1, 4000000)';

beforeAll(async () => {
  handle = await openPGlite();
  expect(pglite()).toBeInstanceOf(PGliteWorker);
  await pglite().exec('create table t (id int8 primary key, amount numeric, at timestamptz, day date, raw bytea, note text); create table c (a int, b text)');
}, 120_000);

afterAll(async () => {
  await handle?.close();
});

describe('PGlite in a worker thread', () => {
  it('round-trips parameters and values: int8 and numeric as numbers, dates, bytea, null', async () => {
    const at = new Date('2024-02-29T12:34:56.789Z');
    await pglite().query('insert into t values ($1, $2, $3, $4, $5, $6)', [9007199254740991, '12.5', at, '2024-03-31', Buffer.from([0, 1, 255]), null]);
    const { rows, affectedRows } = await pglite().query<Record<string, unknown>>('select * from t');
    expect(affectedRows).toBe(0);
    expect(rows).toEqual([{ id: 9007199254740991, amount: 12.5, at, day: new Date('2024-03-31T00:00:00.000Z'), raw: new Uint8Array([0, 1, 255]), note: null }]);
    // Through Kysely too, as every repository reads it.
    const viaKysely = await sql<{ n: number; total: number }>`select count(*) as n, sum(amount) as total from t`.execute(handle.db);
    expect(viaKysely.rows).toEqual([{ n: 1, total: 12.5 }]);
    const updated = await sql`update t set note = ${'x'} where id = ${9007199254740991}`.execute(handle.db);
    expect(updated.numAffectedRows).toBe(1n);
  });

  it('copies in from a Blob and out to /dev/blob', async () => {
    await pglite().query("copy c (a, b) from '/dev/blob' with (format text, delimiter ',')", [], { blob: new Blob(['1,one\n2,two\n']) });
    const out = await pglite().query("copy (select a, b from c order by a) to '/dev/blob'");
    expect(await out.blob?.text()).toBe('1\tone\n2\ttwo\n');
  });

  it('keeps a database error’s code and fields', async () => {
    const error = (await pglite()
      .query('select * from missing_table')
      .catch((e: unknown) => e)) as Error & Record<string, unknown>;
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: '42P01', severity: 'ERROR', position: '15', message: 'relation "missing_table" does not exist' });
    // The caller's stack, then the thread's.
    expect(error.stack).toContain('pglite-worker.test.ts');
    // A COPY's bad value: the upload's error path reads the class (22...) and the message.
    const bad = (await pglite()
      .query("copy c (a, b) from '/dev/blob' with (format text, delimiter ',')", [], { blob: new Blob(['x,one\n']) })
      .catch((e: unknown) => e)) as { code?: string };
    expect(bad.code).toBe('22P02');
  });

  it('keeps a Kysely transaction’s statements together and in order', async () => {
    await pglite().exec('create table ordered (n int)');
    const seen: number[] = [];
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const trx = handle.db.transaction().execute(async (tx) => {
      await sql`insert into ordered values (1)`.execute(tx);
      inside();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await sql`insert into ordered values (2)`.execute(tx);
    });
    await entered;
    // Waits for the transaction's one connection: it sees both rows or none, never one.
    const outside = sql<{ n: number }>`select count(*)::int as n from ordered`.execute(handle.db).then((r) => seen.push(r.rows[0]!.n));
    await Promise.all([trx, outside]);
    expect(seen).toEqual([2]);
  });

  it('leaves the event loop free while a statement runs', async () => {
    const ticks = await ticksDuring(() => pglite().query(HEAVY));
    expect(ticks).toBeGreaterThanOrEqual(5);
  });

  it('rejects every call after close, and the calls under way when its thread dies', async () => {
    const other = await openPGlite();
    const worker = other.pglite as PGliteWorker;
    const running = worker.query(HEAVY).catch((e: unknown) => e);
    const queued = worker.query('select 1').catch((e: unknown) => e);
    await worker.terminate();
    for (const error of [await running, await queued]) {
      expect(error).toMatchObject({ code: '08006', message: expect.stringMatching(/embedded database's thread stopped/) as unknown });
    }
    expect(worker.closed).toBe(true);
    await expect(worker.query('select 1')).rejects.toMatchObject({ code: '08006' });
    await other.close();

    const closing = await openPGlite();
    await closing.close();
    expect(closing.pglite!.closed).toBe(true);
    await expect(closing.pglite!.query('select 1')).rejects.toMatchObject({ code: '08003', message: 'The embedded database is closed' });
  }, 120_000);

  it('fails to open with PGlite’s own reason', async () => {
    await expect(openPGlite({ loadDataDir: new Blob(['not a tar file']) })).rejects.toThrow(/PGlite failed to initialize/);
  }, 60_000);
});

describe('PGlite on the calling thread (PGLITE_IN_WORKER=0)', () => {
  it('holds the event loop for the whole statement: what the worker avoids', async () => {
    const inProcess = await openPGlite({ inWorker: false });
    try {
      expect(inProcess.pglite).not.toBeInstanceOf(PGliteWorker);
      const ticks = await ticksDuring(() => inProcess.pglite!.query(HEAVY));
      expect(ticks).toBeLessThanOrEqual(2);
    } finally {
      await inProcess.close();
    }
  }, 120_000);
});
