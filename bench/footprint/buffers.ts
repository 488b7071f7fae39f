/**
 * What the smaller PGlite buffer pool costs (issue 11, item 6): the same work on a file-backed PGlite
 * with shared_buffers 128MB (initdb's default) and 16MB (src/db/database.ts), alternating, in one run:
 * COPY of 1,000,000 eight-column rows in 100,000-row blobs (as an upload does), a GROUP BY over all of
 * them, and 5 reads of 50,000 rows (as training reads a data set).
 *
 *   npx tsx bench/footprint/buffers.ts     BENCH_ROUNDS=3 by default
 */
import { PGlite } from '@electric-sql/pglite';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROWS = 1_000_000;
const BATCH = 100_000;
const line = (i: number) => `${2000 + (i % 20)}\t${1 + (i % 12)}\t${1 + (i % 28)}\tS${i % 9}\t${i % 3}\t${(i * 7) % 1000}\t${i * 0.5}\t${1000 + i}\n`;

async function run(dataDir: string, sharedBuffers: string) {
  const db = await PGlite.create({ dataDir, startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`] });
  try {
    await db.exec('create table r (c1 text, c2 text, c3 text, c4 text, c5 text, c6 text, c7 text, c8 text)');
    let t = performance.now();
    for (let start = 0; start < ROWS; start += BATCH) {
      let text = '';
      for (let i = start; i < start + BATCH; i++) text += line(i);
      await db.query(`copy r from '/dev/blob' with (format text)`, [], { blob: new Blob([text]) });
    }
    const copyMs = performance.now() - t;
    t = performance.now();
    await db.query('select c4, count(*), avg(c8::float8) from r group by c4');
    const groupMs = performance.now() - t;
    t = performance.now();
    for (let k = 0; k < 5; k++) await db.query(`select * from r where c1 = '${2000 + k}'`);
    const readMs = performance.now() - t;
    return { copyMs, groupMs, readMs };
  } finally {
    await db.close();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const results: Record<string, { copyMs: number[]; groupMs: number[]; readMs: number[] }> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const size of ['128MB', '16MB']) {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-buffers-'));
    try {
      // initdb first, so the timed open does not include it.
      await (await PGlite.create({ dataDir: dir })).close();
      const r = await run(dir, size);
      const into = (results[size] ??= { copyMs: [], groupMs: [], readMs: [] });
      into.copyMs.push(r.copyMs);
      into.groupMs.push(r.groupMs);
      into.readMs.push(r.readMs);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
console.log(`\nPGlite shared_buffers, ${ROUNDS} alternating rounds, median ms`);
for (const [size, r] of Object.entries(results)) {
  console.log(`shared_buffers=${size.padEnd(6)} COPY ${ROWS} rows ${median(r.copyMs).toFixed(0)}   GROUP BY ${median(r.groupMs).toFixed(0)}   5 x 50,000-row reads ${median(r.readMs).toFixed(0)}`);
}
