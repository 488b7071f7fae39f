/**
 * What one COPY batch of a spooled upload costs the embedded database's event loop, by batch size (issue
 * 29): the neighbour benchmark's 47 MB file is read and checked as an upload is (openCsv, each 64 kB
 * chunk timed), then its first PROBE_MB (default 8) of COPY lines are copied into a fresh staging-like
 * table of a file-backed PGlite opened as the service opens it (openPGlite: in its worker thread, or on
 * this thread with PGLITE_IN_WORKER=0) in batches of each size, in ROUNDS (default 3) interleaved rounds.
 * A batch's time, seen from this thread, is how long a request queued behind it waits for the database.
 *
 *   npx tsx bench/ingest/staging-batches.ts [sizes in bytes, comma-separated]     (PGLITE_IN_WORKER=0 to compare)
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPGlite } from '../../src/db/database.js';
import { openCsv, uploadBudget } from '../../src/domain/data/csv-ingest.js';
import { generateCsv } from './generate.js';
import { lineBatches } from '../../src/db/pglite-copy.js';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', '.out');
const sizes = (process.argv[2] ?? '16384,32768,49152,65536,131072,262144').split(',').map(Number);
const probeBytes = Number(process.env.PROBE_MB ?? 8) * 1024 * 1024;
const rounds = Number(process.env.ROUNDS ?? 3);

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2));
};

async function main() {
  mkdirSync(out, { recursive: true });
  const file = join(out, 'neighbour-50mb.csv');
  await generateCsv(file, 720_000);
  const spooled = join(out, 'staging-batches.copy');

  // The receiving side: the check and conversion of each 64 kB chunk, as the upload spool runs it.
  const csv = await openCsv(createReadStream(file, { highWaterMark: 64 * 1024 }), { label: 'bench', budget: uploadBudget(1e10) });
  const spool = createWriteStream(spooled);
  const chunkMs: number[] = [];
  const lines = csv.lines[Symbol.asyncIterator]();
  for (;;) {
    const t0 = performance.now();
    const next = await lines.next();
    chunkMs.push(performance.now() - t0);
    if (next.done) break;
    if (!spool.write(next.value)) await once(spool, 'drain');
  }
  spool.end();
  await once(spool, 'finish');
  console.log(JSON.stringify({ receive: { chunks: chunkMs.length, p50: quantile(chunkMs, 0.5), p99: quantile(chunkMs, 0.99), max: quantile(chunkMs, 1) } }));

  const dataDir = join(out, 'staging-batches-pglite');
  rmSync(dataDir, { recursive: true, force: true });
  const handle = await openPGlite({ dataDir });
  const pglite = handle.pglite!;
  console.log(JSON.stringify({ database: process.env.PGLITE_IN_WORKER === '0' ? 'PGlite on this thread' : 'PGlite in its worker thread' }));
  const cols = csv.header.map((_, i) => `c${i + 1}`);
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const size of sizes) {
        const table = `staging_${size}_${round}`;
        await pglite.query(`create table ${table} (ord integer generated always as identity, ${cols.map((c) => `${c} text`).join(', ')})`);
        const batchMs: number[] = [];
        let bytes = 0;
        for await (const batch of lineBatches(spooled, size)) {
          const t0 = performance.now();
          await pglite.query(`copy ${table} (${cols.join(', ')}) from '/dev/blob' with (format text, delimiter ',')`, [], { blob: new Blob([batch]) });
          batchMs.push(performance.now() - t0);
          bytes += batch.length;
          if (bytes >= probeBytes) break;
        }
        const total = batchMs.reduce((sum, ms) => sum + ms, 0);
        console.log(
          JSON.stringify({ round, batchKb: size / 1024, batches: batchMs.length, p50: quantile(batchMs, 0.5), p90: quantile(batchMs, 0.9), p99: quantile(batchMs, 0.99), msPerMb: Number((total / (bytes / 1024 / 1024)).toFixed(1)) }),
        );
        await pglite.query(`drop table ${table}`);
      }
    }
  } finally {
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(spooled, { force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
