import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGlite, type DatabaseHandle } from '../../src/db/database.js';
import { copyFileInBatches } from '../../src/db/pglite-copy.js';
import { PGliteWorker } from '../../src/db/pglite-worker.js';

/**
 * The embedded database in its worker thread (so an upload holds no one else up: docs/benchmarks.md,
 * neighbour): what crosses between the threads keeps its types, codes and order, and a statement running
 * there leaves this thread's event loop free.
 */
let handle: DatabaseHandle;
let work: string;
const pglite = () => handle.pglite!;
const exclusive = <T>(run: () => Promise<T>) => handle.db.connection().execute(run);

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
  work = mkdtempSync(path.join(tmpdir(), 'pglite-worker-'));
  handle = await openPGlite();
  expect(pglite()).toBeInstanceOf(PGliteWorker);
  await pglite().exec('create table t (id int8 primary key, amount numeric, at timestamptz, day date, raw bytea, note text); create table c (a int, b text)');
}, 120_000);

afterAll(async () => {
  await handle?.close();
  rmSync(work, { recursive: true, force: true });
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

  it('copies a file a batch at a time in its thread, answering other calls between batches', async () => {
    await pglite().exec('create table lines (n int, label text)');
    const file = path.join(work, 'lines.txt');
    const count = 200_000;
    writeFileSync(file, Array.from({ length: count }, (_, i) => `${i}\tline ${i}\n`).join(''));
    let copied = false;
    const copy = copyFileInBatches(pglite(), exclusive, "copy lines (n, label) from '/dev/blob'", file, 4096).then(() => (copied = true));
    // Made while the copy runs: answered after the batch under way, not after the whole file.
    const { rows } = await pglite().query<{ n: number }>('select count(*)::int as n from lines');
    expect(copied).toBe(false);
    expect(rows[0]!.n).toBeLessThan(count);
    await copy;
    expect((await pglite().query<{ n: number; last: number }>('select count(*)::int as n, max(n) as last from lines')).rows).toEqual([{ n: count, last: count - 1 }]);
  });

  it('runs no batch inside another request’s open transaction', async () => {
    await pglite().exec('create table guarded (n int)');
    const file = path.join(work, 'guarded.txt');
    writeFileSync(file, '1\n2\n3\n');
    let copied = false;
    await handle.db.transaction().execute(async (tx) => {
      await sql`insert into guarded values (0)`.execute(tx);
      void copyFileInBatches(pglite(), exclusive, "copy guarded from '/dev/blob'", file, 2).then(() => (copied = true));
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Still only this transaction's own row: the copy waits for its end.
      expect((await sql<{ n: number }>`select count(*)::int as n from guarded`.execute(tx)).rows[0]!.n).toBe(1);
      expect(copied).toBe(false);
    });
    await expect.poll(() => copied).toBe(true);
    expect((await pglite().query<{ n: number }>('select count(*)::int as n from guarded')).rows[0]!.n).toBe(4);
  });

  it('ends a file copy at its first bad batch with the error’s code', async () => {
    const file = path.join(work, 'bad.txt');
    writeFileSync(file, '1\tok\nnot a number\tbad\n');
    await expect(copyFileInBatches(pglite(), exclusive, "copy lines (n, label) from '/dev/blob'", file, 4096)).rejects.toMatchObject({ code: '22P02' });
    // The connection serves the next call.
    expect((await pglite().query<{ ok: number }>('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
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
    await expect(worker.lost).resolves.toMatchObject({ code: '08006' });
    for (const error of [await running, await queued]) {
      expect(error).toMatchObject({ code: '08006', message: expect.stringMatching(/embedded database's thread stopped/) as unknown });
    }
    expect(worker.closed).toBe(true);
    await expect(worker.query('select 1')).rejects.toMatchObject({ code: '08006' });
    await other.close();

    const closing = await openPGlite();
    await closing.close();
    expect(closing.pglite!.closed).toBe(true);
    // A close is not a loss: the server must not exit for it.
    expect(await Promise.race([closing.pglite!.lost, new Promise((resolve) => setTimeout(resolve, 200, 'not lost'))])).toBe('not lost');
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
