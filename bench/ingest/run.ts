/**
 * Ingest benchmark: uploads a generated CSV through the real server's POST /data (curl -F, a real HTTP
 * client streaming the file) and reports rows/s and the server's RSS growth (VmHWM minus the RSS before
 * the upload, from /proc, VmHWM reset just before it), beside a plain COPY FROM STDIN of the same file into
 * the same Postgres. Runs 1M rows and 3M rows on Postgres, then 1M rows on PGlite (file-backed data dir),
 * each BENCH_REPEATS times (default 3) on a fresh server; prints best/median rows/s and worst/median growth.
 *
 *   npx tsx bench/ingest/run.ts            (BENCH_PG=postgres://postgres@127.0.0.1:5432/postgres by default)
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { createReadStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { HEADER, generateCsv } from './generate.js';
import { startServer } from './server.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const out = join(root, 'bench', '.out');
const adminUrl = process.env.BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const run = promisify(execFile);

const withDb = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};
const status = (pid: number, key: 'VmRSS' | 'VmHWM') => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${key}:`));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
};

async function login(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/api/202203010900/sessions.php`, {
    method: 'POST',
    body: new URLSearchParams({ email: 'bench@example.com', password: 'Bench-Passw0rd!' }),
  });
  const body = (await res.json()) as { data: { Hash: string }[] };
  return body.data[0]!.Hash;
}

async function upload(port: number, child: ChildProcess, session: string, jobId: number, file: string, rows: number) {
  await new Promise((r) => setTimeout(r, 500));
  // VmHWM is the process's lifetime peak: without a reset it reports the ~130 MB scrypt buffers of the
  // admin bootstrap and login (N=2^17, r=8), not the upload. Writing 5 to clear_refs resets it to the
  // current RSS (Linux >= 4.0); where that is refused the 50 ms samples alone give the peak.
  let hwmReset = true;
  try {
    writeFileSync(`/proc/${child.pid!}/clear_refs`, '5');
  } catch {
    hwmReset = false;
  }
  const before = status(child.pid!, 'VmRSS');
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, status(child.pid!, 'VmRSS'))), 50);
  const t0 = performance.now();
  const { stdout } = await run('curl', ['-s', '-F', `session=${session}`, '-F', `job_id=${jobId}`, '-F', `Servicefile=@${file};type=text/csv`, `http://127.0.0.1:${port}/api/202203010900/data.php?tz=Europe/Madrid`], {
    maxBuffer: 1 << 20,
  });
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  const hwm = hwmReset ? status(child.pid!, 'VmHWM') : 0;
  const reply = JSON.parse(stdout) as { status: number; data: string };
  if (reply.status !== 0) throw new Error(`upload failed: ${reply.data}`);
  return { seconds, rowsPerSecond: Math.round(rows / seconds), rssBeforeMb: Math.round(before), peakRssMb: Math.round(Math.max(peak, hwm)), growthMb: Math.round(Math.max(peak, hwm) - before), reply: reply.data };
}

async function createJob(query: (text: string, values?: unknown[]) => Promise<{ rows: { id: number }[] }>): Promise<number> {
  const user = await query(`select id from users where email = 'bench@example.com'`);
  const training = await query(`insert into trainings (user_id, app_name) values ($1, 'forecast') returning id`, [user.rows[0]!.id]);
  const job = await query(`insert into jobs (user_id, training_id, app_name) values ($1, $2, 'forecast') returning id`, [user.rows[0]!.id, training.rows[0]!.id]);
  return job.rows[0]!.id;
}

/** Rounds per figure (BENCH_REPEATS, default 3): the machine is shared, so best and median are reported. */
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Best and median rows/s (and share of raw COPY); worst and median RSS growth. */
function summarize(rounds: { rowsPerSecond: number; growthMb: number; rawRowsPerSecond?: number; shareOfRaw?: number }[]) {
  const of = (key: 'rowsPerSecond' | 'growthMb' | 'rawRowsPerSecond' | 'shareOfRaw') => rounds.map((r) => r[key] ?? 0);
  const summary: Record<string, number> = {
    rowsPerSecondBest: Math.max(...of('rowsPerSecond')),
    rowsPerSecondMedian: median(of('rowsPerSecond')),
    growthMbWorst: Math.max(...of('growthMb')),
    growthMbMedian: median(of('growthMb')),
  };
  if (rounds[0]?.rawRowsPerSecond !== undefined) {
    Object.assign(summary, {
      rawRowsPerSecondBest: Math.max(...of('rawRowsPerSecond')),
      rawRowsPerSecondMedian: median(of('rawRowsPerSecond')),
      shareOfRawMedianPercent: median(of('shareOfRaw')),
    });
  }
  return summary;
}

async function main() {
  mkdirSync(out, { recursive: true });
  // BENCH_QUICK=1: the 1M-row Postgres figure only.
  const quick = process.env.BENCH_QUICK === '1';
  const files = [
    { rows: 1_000_000, file: join(out, 'ingest-1m.csv') },
    { rows: 3_000_000, file: join(out, 'ingest-3m.csv') },
  ].slice(0, quick ? 1 : 2);
  for (const f of files) {
    const { bytes } = await generateCsv(f.file, f.rows);
    console.log(`${f.file}: ${f.rows} rows, ${(bytes / 1e6).toFixed(1)} MB`);
  }

  // --- Postgres ---
  const dbName = `ingest_bench_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const url = withDb(adminUrl, dbName);
  const port = 18000 + Math.floor(Math.random() * 1000);
  const results: Record<string, unknown> = {};
  try {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const query = (text: string, values?: unknown[]) => client.query(text, values) as Promise<{ rows: { id: number }[] }>;
    for (const f of files) {
      const rounds = [];
      for (let round = 0; round < REPEATS; round++) {
        // A fresh server per upload, so each RSS growth is one upload's from the same baseline.
        const server = await startServer({ DATABASE_URL: url, DATA_DIR: join(out, 'ingest-pg-data') }, port + round);
        try {
          const session = await login(port + round);
          const jobId = await createJob(query);
          const api = await upload(port + round, server, session, jobId, f.file, f.rows);
          await query(`drop table if exists raw_copy; create table raw_copy (${HEADER.map((h) => `${h} text`).join(', ')})`);
          const t0 = performance.now();
          await pipeline(createReadStream(f.file), client.query(copyStreams.from('copy raw_copy from stdin (format csv, header true)')));
          const rawSeconds = (performance.now() - t0) / 1000;
          const rawRowsPerSecond = Math.round(f.rows / rawSeconds);
          const round_ = { ...api, rawCopySeconds: Number(rawSeconds.toFixed(2)), rawRowsPerSecond, shareOfRaw: Math.round((api.rowsPerSecond / rawRowsPerSecond) * 100) };
          console.log(`postgres ${f.rows} rows, round ${round + 1}`, round_);
          rounds.push(round_);
        } finally {
          server.kill('SIGTERM');
          await new Promise((r) => server.once('exit', r));
        }
      }
      results[`postgres ${f.rows}`] = summarize(rounds);
    }
    await client.end();
  } finally {
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }

  if (quick) return console.log(JSON.stringify(results, null, 2));

  // --- PGlite (file-backed) ---
  const dataDir = join(out, 'ingest-pglite-data');
  const f = files[0]!;
  const rounds = [];
  for (let round = 0; round < REPEATS; round++) {
    rmSync(dataDir, { recursive: true, force: true });
    const litePort = port + REPEATS + round;
    const lite = await startServer({ DATABASE_URL: '', DATA_DIR: dataDir }, litePort);
    try {
      const session = await login(litePort);
      const jobId = await createJobOverHttp(litePort, session);
      const api = await upload(litePort, lite, session, jobId, f.file, f.rows);
      console.log(`pglite ${f.rows} rows, round ${round + 1}`, api);
      rounds.push(api);
    } finally {
      lite.kill('SIGTERM');
      await new Promise((r) => lite.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  results[`pglite ${f.rows}`] = summarize(rounds);
  console.log(JSON.stringify(results, null, 2));
}

/** PGlite is owned by the server process, so the job is made through the API (admins need no subscription). */
async function createJobOverHttp(port: number, session: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/api/202203010900/jobs.php?session=${session}&tz=Europe/Madrid&app_name=forecast&newTraining=1`, {
    method: 'POST',
    body: new URLSearchParams({ session, tz: 'Europe/Madrid', app_name: 'forecast', newTraining: '1' }),
  });
  const body = (await res.json()) as { status: number; data: { job_id: number | string } | string };
  if (body.status !== 0 || typeof body.data === 'string') throw new Error(`POST /jobs.php failed: ${JSON.stringify(body.data)}`);
  return Number(body.data.job_id);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
