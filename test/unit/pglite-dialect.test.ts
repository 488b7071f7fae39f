import { CompiledQuery, Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { EmbeddedPostgres } from '../../src/db/pglite-create.js';
import { CONNECTION_WAIT_TIMEOUT, PGliteDialect } from '../../src/db/pglite-dialect.js';

/** The embedded database's thread as the dialect sees it: statements in arrival order, answered when the test says. */
class ThreadInOrder implements EmbeddedPostgres {
  readonly waitReady = Promise.resolve();
  readonly closed = false;
  readonly sent: string[] = [];
  private readonly waiting: (() => void)[] = [];

  query<T>(text: string): Promise<{ rows: T[] }> {
    this.sent.push(text);
    return new Promise((resolve) => this.waiting.push(() => resolve({ rows: [{ text } as T] })));
  }
  /** Answers the statements sent so far, oldest first, each in its own turn. */
  async answer(count = Infinity): Promise<void> {
    for (let i = 0; i < count && this.waiting.length > 0; i++) {
      this.waiting.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  exec(): Promise<unknown> {
    return Promise.resolve([]);
  }
  dumpDataDir(): Promise<Blob> {
    return Promise.resolve(new Blob([]));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the embedded database dialect', () => {
  it('sends reads back to back, while statements through the connection go one at a time', async () => {
    const thread = new ThreadInOrder();
    const dialect = new PGliteDialect(thread);
    const db = new Kysely<unknown>({ dialect });
    const reads = ['select 1', 'select 2', 'select 3'].map((text) => dialect.read(text, []));
    await settle();
    expect(thread.sent).toEqual(['select 1', 'select 2', 'select 3']);
    await thread.answer();
    expect((await Promise.all(reads)).map((rows) => rows[0])).toEqual([{ text: 'select 1' }, { text: 'select 2' }, { text: 'select 3' }]);

    const queries = ['update a', 'update b'].map((text) => db.executeQuery(CompiledQuery.raw(text)));
    await settle();
    expect(thread.sent.slice(3)).toEqual(['update a']);
    await thread.answer();
    await settle();
    expect(thread.sent.slice(3)).toEqual(['update a', 'update b']);
    await thread.answer();
    await Promise.all(queries);
  });

  it('holds a read while a transaction is open, and sends it after the commit', async () => {
    const thread = new ThreadInOrder();
    const dialect = new PGliteDialect(thread);
    const db = new Kysely<unknown>({ dialect });
    let finish!: () => void;
    const transaction = db.transaction().execute(async (trx) => {
      await sql`insert into t values (1)`.execute(trx);
      await new Promise<void>((resolve) => (finish = resolve));
    });
    await settle();
    await thread.answer(1); // begin
    await settle();
    const read = dialect.read('select from t', []);
    await thread.answer(1); // insert
    await settle();
    expect(thread.sent).toEqual(['begin', 'insert into t values (1)']);
    finish();
    await settle();
    await thread.answer(1); // commit
    await transaction;
    await settle();
    expect(thread.sent).toEqual(['begin', 'insert into t values (1)', 'commit', 'select from t']);
    await thread.answer();
    await read;
  });

  it('gives a read up at the connection wait bound while the connection stays held', async () => {
    const thread = new ThreadInOrder();
    const dialect = new PGliteDialect(thread, { waitMs: 100 });
    const db = new Kysely<unknown>({ dialect });
    let release!: () => void;
    const held = db.connection().execute(() => new Promise<void>((resolve) => (release = resolve)));
    await settle();
    const started = performance.now();
    await expect(dialect.read('select 1', [])).rejects.toMatchObject({ code: CONNECTION_WAIT_TIMEOUT });
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
    expect(thread.sent).toEqual([]);
    release();
    await held;
    const read = dialect.read('select 2', []);
    await settle();
    expect(thread.sent).toEqual(['select 2']);
    await thread.answer();
    await read;
  });
});
