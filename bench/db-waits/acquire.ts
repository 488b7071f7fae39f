/**
 * The cost of the bounded wait for the embedded database's connection (issue 29): the same statements
 * through Kysely on one in-memory PGlite, through a dialect without a bound (the baseline) and one with
 * DB_CONNECTION_WAIT_MS, alternated in rounds in the same process. Reports the median time per
 * turn of the line alone (acquire and release, no statement) and per statement, of each and their
 * ratio, with one caller (nothing waits) and with 8 callers at once (a line forms).
 *
 *   npx tsx bench/db-waits/acquire.ts [rounds=9] [statements=2000]
 */
import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';

const rounds = Number(process.argv[2] ?? 9);
const statements = Number(process.argv[3] ?? 2000);

const pglite = await PGlite.create();
const baseline = new Kysely<unknown>({ dialect: new PGliteDialect(pglite) });
const bounded = new Kysely<unknown>({ dialect: new PGliteDialect(pglite, { waitMs: 10_000 }) });

async function run(db: Kysely<unknown>, callers: number): Promise<number> {
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let i = 0; i < statements / callers; i++) await sql`select 1`.execute(db);
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1000 / statements;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The line alone: acquire and release the connection with no statement, microseconds per turn. */
async function turns(dialect: PGliteDialect, callers: number, count: number): Promise<number> {
  const driver = dialect.createDriver();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let i = 0; i < count / callers; i++) await driver.releaseConnection(await driver.acquireConnection());
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1000 / count;
}

for (const callers of [1, 8]) {
  const base: number[] = [];
  const withBound: number[] = [];
  for (let round = 0; round < rounds + 1; round++) {
    const b = await turns(new PGliteDialect(pglite), callers, 100_000);
    const w = await turns(new PGliteDialect(pglite, { waitMs: 10_000 }), callers, 100_000);
    // The first round warms up.
    if (round === 0) continue;
    base.push(b);
    withBound.push(w);
  }
  const b = median(base);
  const w = median(withBound);
  console.log(`the line alone, ${callers} caller(s): baseline ${b.toFixed(2)} us/turn, bounded ${w.toFixed(2)} us/turn, ratio ${(w / b).toFixed(3)}`);
}

for (const callers of [1, 8]) {
  await run(baseline, callers);
  await run(bounded, callers);
  const base: number[] = [];
  const withBound: number[] = [];
  for (let round = 0; round < rounds; round++) {
    base.push(await run(baseline, callers));
    withBound.push(await run(bounded, callers));
  }
  const b = median(base);
  const w = median(withBound);
  console.log(`${callers} caller(s): baseline ${b.toFixed(1)} us/statement, bounded ${w.toFixed(1)} us/statement, ratio ${(w / b).toFixed(3)}`);
}
await pglite.close();
