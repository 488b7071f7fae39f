/**
 * Jobs in parts (issue 34): one panel job spread over every training thread of every process on the shared
 * Postgres, and fair turns between users. Real service processes (test/faults/support.ts startApi/startWorker:
 * `node --import tsx src/server.ts` and `src/worker.ts`) on a fresh database of the machine's Postgres per run,
 * consumers registered and subscribed through the API, uploads as a browser sends them. Data: real series only,
 * bench/forecast/panel-speed.ts monthlyPanel (vega-datasets' 35 monthly unemployment and employment series
 * repeated with documented rotations and multipliers) and, for the small job, the first 200 months of
 * vega-datasets' co2-concentration.csv (Mauna Loa, 1958-03 on; the last 12 empty).
 *
 * Cases (BENCH_PARTS_ONLY=fairness,speedup,scale,ceiling; default all four):
 *  1. fairness: one API process, WORKERS=1. User A uploads a panel of BENCH_PARTS_A_SERIES monthly series
 *     (default 2,000: the 1,000-series panel finishes in under 30 s; 3,000 fail, the planning thread out of its
 *     512 MB heap, on this code and before issue 34), and 3 s after A's upload was answered user B
 *     (another consumer with its own subscription) uploads the single co2 series. B's time is from its upload
 *     answered to its job Finished (target <= 15 s while A's job runs); A's total from its upload answered. With
 *     BENCH_B_DIR=<tree of another commit> (e.g. `git archive ecc8581 | tar -x -C /tmp/b34-ecc8581` and its
 *     node_modules a symlink to this tree's) the same case runs once more on that tree's API (the claim order
 *     before issue 34: jobs in id order, one job one unit).
 *  2. speedup: a panel of BENCH_PARTS_SPEEDUP_SERIES (default 2,000) monthly series of 10 years; the wall from
 *     the upload answered to Finished with the API alone (WORKERS=1) and with the API plus one `worker`
 *     (WORKERS=1), alternated, BENCH_PARTS_ROUNDS rounds each (default 2), each on a fresh database and fresh
 *     processes; each process's CPU seconds over the job (/proc/<pid>/stat utime + stime); the outputs (GET
 *     /data output=1) of every run compared, same rows in the same order. Target: the pair >= 1.6x faster. With
 *     BENCH_B_DIR each round also runs that tree's API alone (the code before issue 34: one job, one unit).
 *  3. scale: 10,000 monthly series of 10 years (1,200,000 rows, 42.6 MB: under the default MAX_UPLOAD_MB of
 *     200, so no limit is raised) through the API plus one worker, default settings (TRAINING_MAX_ROWS=100000
 *     cuts each series to its most recent max(24, 100000 / 10000) = 24 known rows); the wall, each process's
 *     peak RSS (VmHWM, target <= 1 GB) and the longest time the job's Advance (GET /jobs_progress, polled every
 *     second) stood still (target <= 10 s). BENCH_PARTS_SCALE_SERIES changes the count, BENCH_PARTS_SCALE_ENV
 *     (`TRAINING_MEMORY_MB=1536,...`) sets the two processes' settings: with the defaults the job is refused
 *     (the planning thread holds all 1.2M rows: 516 MB estimated against 512 MB).
 *  4. ceiling: the speed-up case's panel trained by the engine in-process, one process alone and then two at
 *     once (bench/parts/ceiling.ts): 2 x alone / the pair's longer wall is the most any split of one job over two
 *     processes can reach on this machine (no serial step, no coordination, nothing shared).
 * The processes run as the image runs them: `node --v8-pool-size=2 dist/src/server.js` and dist/src/worker.js
 * (this checkout and BENCH_B_DIR's compiled first).
 * Every case also prints where the job's time went: planning (upload answered -> its parts queued), the global
 * rounds, the groups of series and the rest (assembly, output), with the parts each process ran, from job_parts
 * snapshots every 0.5 s (the assembly deletes them) and the job's 'training.plan' / 'training.finish' log lines.
 *
 *   npm run bench parts                      or   npx tsx bench/parts/run.ts
 *   BENCH_PARTS_ONLY=speedup                 only these cases (comma list)
 *   BENCH_PARTS_ROUNDS=2                     speed-up rounds of each setting
 *   BENCH_PARTS_WARM=500                     speed-up: first a job of this many series on the same processes (their
 *                                            training threads and JIT warm, as in a service that has been running),
 *                                            then the measured one; ceiling: each process first trains such a panel;
 *                                            default 0 (fresh processes, cold)
 *   BENCH_PARTS_A_SERIES=2000, BENCH_PARTS_SPEEDUP_SERIES=2000, BENCH_PARTS_SCALE_SERIES=10000
 *   BENCH_B_DIR=/tmp/b34-ecc8581             fairness once more on that tree's API (optional)
 *   BENCH_PARTS_SCALE_ENV=TRAINING_MEMORY_MB=1536   the scale case's processes' settings
 *   BENCH_PARTS_TIME_LIMIT=1200              seconds a job may take before the run gives up on it
 *   FAULTS_DATABASE_URL                      the Postgres server (default postgres://postgres@127.0.0.1:5432/test)
 *   BENCH_NODE_FLAGS='--v8-pool-size=2'      node's flags for the service processes instead of the image's (an A/B of a V8 setting)
 * Writes bench/.out/parts.md (and a copy named by the commit, and the cases and settings when not all defaults).
 * Needs Postgres.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createDatabase, killAll, newConsumer, newJob, type Client, type FaultDatabase } from '../../test/faults/support.js';
import { DATA_DIR } from '../forecast/datasets.js';
import { OUT } from '../forecast/panels-ours.js';
import { uploadOf } from '../forecast/panels-data.js';
import { monthlyPanel } from '../forecast/panel-speed.js';
import { commitOf, fileTag } from '../forecast/panels.js';
import { ceilingRounds } from './ceiling.js';
import { api, apiAt, cpuByThread, cpuSeconds, machineCpu, csvOf, jobLogs, load, outputOf, peakRssMb, profile, progressOf, sleep, statusOf, threadsCpu, uploadCsv, watchParts, worker } from './processes.js';

const ONLY = process.env.BENCH_PARTS_ONLY?.split(',').filter(Boolean);
const ROUNDS = Number(process.env.BENCH_PARTS_ROUNDS ?? 2);
const A_SERIES = Number(process.env.BENCH_PARTS_A_SERIES ?? 2000);
const SPEEDUP_SERIES = Number(process.env.BENCH_PARTS_SPEEDUP_SERIES ?? 2000);
const WARM_SERIES = Number(process.env.BENCH_PARTS_WARM ?? 0);
const SCALE_SERIES = Number(process.env.BENCH_PARTS_SCALE_SERIES ?? 10_000);
const B_DIR = process.env.BENCH_B_DIR;
/** Extra settings of the scale case's two processes, `NAME=value,NAME=value` (default none: the defaults). */
const SCALE_ENV = Object.fromEntries(
  (process.env.BENCH_PARTS_SCALE_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=') as [string, string]),
);
const LIMIT_MS = Number(process.env.BENCH_PARTS_TIME_LIMIT ?? 1200) * 1000;
const ENDED = [3, 4, 5];
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** B's job: the first 200 months of the Mauna Loa CO2 series (1958-03 to 1974-10), the last 12 to forecast. */
function co2Csv(): string {
  const [, ...lines] = readFileSync(join(DATA_DIR, 'co2-concentration.csv'), 'utf8').trim().split('\n');
  const rows = lines.slice(0, 200).map((line, i) => {
    const [date, co2] = line.split(',');
    const [year, month] = date!.split('-');
    return `${Number(year)},${Number(month)},${i >= 188 ? '' : co2}`;
  });
  return `year,month,co2\n${rows.join('\n')}\n`;
}

const monthlyCsv = (series: number) => csvOf(uploadOf(monthlyPanel(series)));

interface Lines {
  table: string[];
  notes: string[];
}

function log(lines: Lines, line: string, note = false) {
  (note ? lines.notes : lines.table).push(line);
  console.log(line);
}

/** Polls the jobs' statuses every `everyMs` until all ended; answers when each ended (ms since epoch) and its status. */
async function waitEnded(client: Map<number, Client>, everyMs: number, onTick?: (ended: Map<number, { at: number; status: number }>) => void): Promise<Map<number, { at: number; status: number }>> {
  const ended = new Map<number, { at: number; status: number }>();
  const started = Date.now();
  while (ended.size < client.size) {
    for (const [jobId, c] of client) {
      if (ended.has(jobId)) continue;
      const status = await statusOf(c, jobId);
      if (ENDED.includes(status)) ended.set(jobId, { at: Date.now(), status });
    }
    onTick?.(ended);
    if (Date.now() - started > LIMIT_MS) throw new Error(`jobs ${[...client.keys()].join(', ')} not ended after ${LIMIT_MS / 1000} s`);
    await sleep(everyMs);
  }
  return ended;
}

// ---------- 1. fairness ----------

async function fairnessRun(lines: Lines, label: string, root: string | undefined) {
  const db = await createDatabase();
  try {
    const service = root ? await apiAt(root, db) : await api(db);
    try {
      const [alice, bob] = await Promise.all([newConsumer(service.baseUrl), newConsumer(service.baseUrl)]);
      const csvA = monthlyCsv(A_SERIES);
      const csvB = co2Csv();
      const jobA = await newJob(alice);
      const jobB = await newJob(bob);
      const watcher = watchParts(db, jobA);
      const loadBefore = load();
      await uploadCsv(alice, jobA, csvA);
      const aUploaded = Date.now();
      await sleep(3000);
      await uploadCsv(bob, jobB, csvB);
      const bUploaded = Date.now();
      let aStatusWhenBEnded = -1;
      const ended = await waitEnded(
        new Map([
          [jobA, alice],
          [jobB, bob],
        ]),
        200,
        (e) => {
          if (aStatusWhenBEnded === -1 && e.has(jobB)) aStatusWhenBEnded = e.get(jobA)?.status ?? 2;
        },
      );
      const parts = await watcher.stop();
      const a = ended.get(jobA)!;
      const b = ended.get(jobB)!;
      const bMs = b.at - bUploaded;
      const aRunning = aStatusWhenBEnded === 2 || aStatusWhenBEnded === 1;
      const met = b.status === 3 && bMs <= 15_000 && aRunning;
      log(
        lines,
        `| fairness, ${label} | 1 API, WORKERS=1; A ${A_SERIES.toLocaleString('en-US')} monthly series (${csvA.split('\n').length - 2} rows), B 200 rows of co2 3 s later | B ${s(bMs)} upload -> Finished (status ${b.status}); A ${aRunning ? 'still running' : `already ended (status ${aStatusWhenBEnded})`} then; A ${s(a.at - aUploaded)} (status ${a.status}) | B <= 15 s while A runs | ${met ? 'yes' : 'NO'} | ${loadBefore} -> ${load()} |`,
      );
      const logs = await jobLogs(db, jobA).catch(() => []);
      log(lines, `- fairness ${label}, A's job: ${profile(aUploaded, a.at, parts, { api: service.pid })}; ${watcher.planned()}; log: ${logs.map((l) => `${l.procedure}: ${l.text}`).join(' | ') || '-'}`, true);
    } finally {
      await service.stop();
    }
  } finally {
    await db.drop();
  }
}

async function fairness(lines: Lines) {
  await fairnessRun(lines, 'this code', undefined);
  if (B_DIR) await fairnessRun(lines, `code of ${B_DIR}`, B_DIR);
}

// ---------- 2. speedup ----------

type SpeedMode = 'alone' | 'pair' | 'before';
const MODE_LABEL: Record<SpeedMode, string> = { alone: 'API alone', pair: 'API + 1 worker', before: `API alone, code of ${B_DIR ?? '-'}` };

interface SpeedRun {
  mode: SpeedMode;
  wallMs: number;
  cpu: Record<string, number>;
  /** Of `cpu`, the main thread's (HTTP, database, the parts' JSON); the rest is the training and V8's threads. */
  main: Record<string, number>;
  /** CPU seconds the whole machine was busy from the upload answered to Finished (every process, Postgres included). */
  busy: number;
  output: string;
  rows: number;
  load: string;
}

async function speedRun(lines: Lines, mode: SpeedMode, csv: string): Promise<SpeedRun> {
  const db: FaultDatabase = await createDatabase();
  try {
    const apiProcess = mode === 'before' ? await apiAt(B_DIR!, db) : await api(db);
    const workerProcess = mode === 'pair' ? await worker(db) : undefined;
    try {
      const client = await newConsumer(apiProcess.baseUrl);
      if (WARM_SERIES > 0) {
        const warmJob = await newJob(client);
        await uploadCsv(client, warmJob, monthlyCsv(WARM_SERIES));
        await waitEnded(new Map([[warmJob, client]]), 200);
      }
      const jobId = await newJob(client);
      const watcher = watchParts(db, jobId);
      const pids: Record<string, number> = { api: apiProcess.pid, ...(workerProcess ? { worker: workerProcess.pid } : {}) };
      const loadBefore = load();
      await uploadCsv(client, jobId, csv);
      const uploaded = Date.now();
      const cpuBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
      const mainBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid, pid)]));
      const threadsBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, threadsCpu(pid)]));
      const machineBefore = machineCpu();
      const ended = (await waitEnded(new Map([[jobId, client]]), 200)).get(jobId)!;
      const machineAfter = machineCpu();
      const machine = `machine busy ${(machineAfter.busy - machineBefore.busy).toFixed(1)} s of ${((2 * (ended.at - uploaded)) / 1000).toFixed(1)} (2 cores), Postgres ${(machineAfter.postgres - machineBefore.postgres).toFixed(1)} s`;
      const byThread = Object.entries(pids)
        .map(([k, pid]) => `${k}: ${cpuByThread(pid, threadsBefore[k]!, threadsCpu(pid))}`)
        .join('; ');
      const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid) - cpuBefore[k]!]));
      const main = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid, pid) - mainBefore[k]!]));
      const parts = await watcher.stop();
      if (ended.status !== 3) throw new Error(`speedup ${mode}: job ended with status ${ended.status}`);
      const output = await outputOf(client, jobId);
      const run: SpeedRun = { mode, wallMs: ended.at - uploaded, cpu, main, busy: machineAfter.busy - machineBefore.busy, output: JSON.stringify(output), rows: output.length, load: `${loadBefore} -> ${load()}` };
      const logs = await jobLogs(db, jobId);
      // The runner's own sum of its training threads' CPU (planning, parts, assembly) and their peak: the rest of the processes' CPU is outside them.
      const used = (await db.query<{ cpu: number; ram: number }>('select cpu, ram from consumptions where job_id = $1', [jobId]))[0];
      const threads = used ? `training threads' CPU ${used.cpu.toFixed(1)} s (consumption record), peak thread memory ${used.ram.toFixed(0)} MB` : 'no consumption record';
      log(lines, `- speedup ${mode}: ${s(run.wallMs)}; ${threads}; CPU by thread (${byThread}); ${machine}; ${profile(uploaded, ended.at, parts, pids)}; ${watcher.planned()}; log: ${logs.map((l) => `${l.procedure}: ${l.text}`).join(' | ')}`, true);
      return run;
    } finally {
      await workerProcess?.stop();
      await apiProcess.stop();
    }
  } finally {
    await db.drop();
  }
}

async function speedup(lines: Lines) {
  const csv = monthlyCsv(SPEEDUP_SERIES);
  const rowCount = csv.split('\n').length - 2;
  const runs: SpeedRun[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of B_DIR ? (['alone', 'pair', 'before'] as const) : (['alone', 'pair'] as const)) {
      const run = await speedRun(lines, mode, csv);
      runs.push(run);
      const cpu = Object.entries(run.cpu)
        .map(([k, v]) => `${k} ${v.toFixed(1)} s (main thread ${run.main[k]!.toFixed(1)} s)`)
        .join(', ');
      log(lines, `| speedup round ${round + 1}, ${MODE_LABEL[mode]} | ${SPEEDUP_SERIES.toLocaleString('en-US')} monthly series (${rowCount} rows), WORKERS=1 each${WARM_SERIES > 0 ? `, after a ${WARM_SERIES}-series job on the same processes` : ''} | ${s(run.wallMs)}; CPU over the job: ${cpu}; ${run.rows} output rows | - | - | ${run.load} |`);
    }
  }
  const meanOf = (mode: string, f: (r: SpeedRun) => number = (r) => r.wallMs) => mean(runs.filter((r) => r.mode === mode).map(f));
  const ratio = meanOf('alone') / meanOf('pair');
  // The pair's wall is at least its busy CPU over the 2 cores: ratio = 2 x alone's wall / the pair's busy CPU x the
  // share of the 2 cores the pair kept busy. The first factor is the most the pair could reach with the CPU it used.
  const bound = (2 * meanOf('alone')) / 1000 / meanOf('pair', (r) => r.busy);
  const used = meanOf('pair', (r) => r.busy / ((2 * r.wallMs) / 1000));
  const ours = runs.filter((r) => r.mode !== 'before');
  const identical = ours.every((r) => r.output === ours[0]!.output);
  const before = runs.filter((r) => r.mode === 'before');
  const beforeNote = before.length === 0 ? '' : `; before issue 34 (API alone) ${s(meanOf('before'))}, output ${before.every((r) => r.output === ours[0]!.output) ? 'identical to ours' : 'differs from ours'}`;
  log(lines, `| speedup bound | mean of ${ROUNDS} rounds each | machine busy: alone ${meanOf('alone', (r) => r.busy).toFixed(1)} s (${meanOf('alone', (r) => r.busy / (r.wallMs / 1000)).toFixed(2)} cores), pair ${meanOf('pair', (r) => r.busy).toFixed(1)} s; 2 x alone's wall / the pair's busy CPU ${bound.toFixed(2)}x (the most the pair could reach with the CPU it used, had it kept both cores busy throughout); the pair kept ${(100 * used).toFixed(0)}% of the 2 cores busy | - | - | ${load()} |`);
  log(lines, `| speedup | mean of ${ROUNDS} rounds each | alone ${s(meanOf('alone'))}, pair ${s(meanOf('pair'))}: ${ratio.toFixed(2)}x; outputs ${identical ? `identical (${ours[0]!.rows} rows, same order) in all ${ours.length} runs of this code` : 'DIFFER'}${beforeNote} | >= 1.6x, same output | ${ratio >= 1.6 && identical ? 'yes' : 'NO'} | ${load()} |`);
}

// ---------- 4. ceiling ----------

async function ceiling(lines: Lines) {
  const startLoad = load();
  const { alone, pairs } = await ceilingRounds(SPEEDUP_SERIES, ROUNDS, WARM_SERIES);
  const setup = `${SPEEDUP_SERIES.toLocaleString('en-US')} monthly series in-process, one thread each${WARM_SERIES > 0 ? `, after a ${WARM_SERIES}-series panel in the same process` : ''}`;
  pairs.forEach((pair, round) => {
    const a = alone[round]!;
    log(lines, `| ceiling round ${round + 1} | ${setup} | alone ${s(a.wallMs)} (CPU ${a.cpuSeconds.toFixed(1)} s); two at once ${pair.map((p) => `${s(p.wallMs)} (CPU ${p.cpuSeconds.toFixed(1)} s)`).join(' and ')}: ${((2 * a.wallMs) / Math.max(...pair.map((p) => p.wallMs))).toFixed(2)}x | - | - | ${startLoad} -> ${load()} |`);
  });
  const ratio = (2 * mean(alone.map((a) => a.wallMs))) / mean(pairs.map((p) => Math.max(p[0].wallMs, p[1].wallMs)));
  const cpuGrowth = mean(pairs.flatMap((p) => p.map((r) => r.cpuSeconds))) / mean(alone.map((a) => a.cpuSeconds));
  log(lines, `| ceiling | mean of ${ROUNDS} rounds | two processes at most ${ratio.toFixed(2)}x one; CPU per run ${cpuGrowth.toFixed(2)}x alone's when two run at once | the speed-up target (1.6x) is within reach only if this is above it | ${ratio >= 1.6 ? 'yes' : 'NO'} | ${load()} |`);
}

// ---------- 3. scale ----------

async function scale(lines: Lines) {
  const csv = monthlyCsv(SCALE_SERIES);
  const rowCount = csv.split('\n').length - 2;
  const db = await createDatabase();
  try {
    const apiProcess = await api(db, SCALE_ENV);
    const workerProcess = await worker(db, SCALE_ENV);
    try {
      const client = await newConsumer(apiProcess.baseUrl);
      const jobId = await newJob(client);
      const watcher = watchParts(db, jobId, 1000);
      const pids = { api: apiProcess.pid, worker: workerProcess.pid };
      const loadBefore = load();
      const posted = Date.now();
      await uploadCsv(client, jobId, csv);
      const uploaded = Date.now();
      // Advance every second: the longest time it stood still, and where.
      const changes: { at: number; advance: number }[] = [];
      let last: number | undefined;
      let status = 0;
      const rss = { api: 0, worker: 0 };
      while (!ENDED.includes(status)) {
        const tick = Date.now();
        const advance = (await progressOf(client, jobId)).Advance;
        if (advance !== last) changes.push({ at: tick, advance });
        last = advance;
        status = await statusOf(client, jobId);
        rss.api = peakRssMb(apiProcess.pid);
        rss.worker = peakRssMb(workerProcess.pid);
        if (tick - uploaded > LIMIT_MS) throw new Error(`scale: job not ended after ${LIMIT_MS / 1000} s`);
        await sleep(Math.max(0, 1000 - (Date.now() - tick)));
      }
      const finished = Date.now();
      changes.push({ at: finished, advance: 100 });
      let gap = 0;
      let gapAt = '';
      for (let i = 1; i < changes.length; i++) {
        const g = changes[i]!.at - changes[i - 1]!.at;
        if (g > gap) {
          gap = g;
          gapAt = `from ${changes[i - 1]!.advance}% at ${s(changes[i - 1]!.at - uploaded)} to ${changes[i]!.advance}%`;
        }
      }
      const parts = await watcher.stop();
      const progress = await progressOf(client, jobId);
      const stat = progress.Stat;
      const maxRss = Math.max(rss.api, rss.worker);
      const met = status === 3 && maxRss <= 1024 && gap <= 10_000;
      log(
        lines,
        `| scale | API + 1 worker, WORKERS=1 each, ${Object.keys(SCALE_ENV).length > 0 ? Object.entries(SCALE_ENV).map(([k, v]) => `${k}=${v}`).join(', ') : 'defaults'}; ${SCALE_SERIES.toLocaleString('en-US')} monthly series (${rowCount} rows, ${(csv.length / 1e6).toFixed(1)} MB) | status ${status} after ${s(finished - uploaded)} (upload request ${s(uploaded - posted)}); peak RSS API ${rss.api.toFixed(0)} MB, worker ${rss.worker.toFixed(0)} MB; Advance still at most ${s(gap)} (${gapAt}), ${changes.length - 1} changes | finishes, <= 1 GB each, moves every <= 10 s | ${met ? 'yes' : 'NO'} | ${loadBefore} -> ${load()} |`,
      );
      const logs = await jobLogs(db, jobId);
      log(lines, `- scale: ${profile(uploaded, finished, parts, pids)}; ${watcher.planned()}; log: ${logs.map((l) => `${l.procedure}: ${l.text}`).join(' | ')}`, true);
      const records = await db.query<{ text: string }>('select text from stat_records where job_id = $1 order by id', [jobId]);
      log(lines, `- scale job ${stat?.Status_Name ?? '?'}${stat?.Text ? ` (${stat.Text})` : ''}; status record: ${records.map((r) => r.text).join(' | ') || '-'}`, true);
      const cut = /each series cut to [^;.]*/.exec(stat?.Explanation ?? '')?.[0];
      log(lines, `- scale explanation${cut ? ` (${cut})` : ''}: ${(stat?.Explanation ?? '-').slice(0, 400)}`, true);
      log(lines, `- scale Advance changes (s after upload: %): ${changes.map((c) => `${((c.at - uploaded) / 1000).toFixed(0)}:${c.advance}`).join(' ')}`, true);
    } finally {
      await workerProcess.stop();
      await apiProcess.stop();
    }
  } finally {
    await db.drop();
  }
}

export async function benchParts() {
  mkdirSync(OUT, { recursive: true });
  const commit = commitOf();
  const started = new Date().toISOString();
  const lines: Lines = { table: ['| case | setup | figures | target | met | load (1 min, before -> after) |', '|---|---|---|---|---|---|'], notes: [] };
  console.log(`parts: commit ${commit}, load ${load()}`);
  // The processes run dist/ as the image does (processes.ts): this checkout's, and BENCH_B_DIR's, compiled first.
  for (const root of [resolve(import.meta.dirname, '../..'), ...(B_DIR ? [resolve(B_DIR)] : [])]) {
    const build = spawnSync(process.execPath, ['scripts/ensure-build.mjs'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) throw new Error(`scripts/ensure-build.mjs failed in ${root}`);
  }
  const cases: [string, (l: Lines) => Promise<void>][] = [
    ['fairness', fairness],
    ['speedup', speedup],
    ['scale', scale],
    ['ceiling', ceiling],
  ];
  try {
    for (const [name, run] of cases.filter(([name]) => !ONLY || ONLY.includes(name))) {
      try {
        await run(lines);
      } catch (error) {
        log(lines, `| ${name} | - | failed: ${(error as Error).message.slice(0, 300).replace(/\n/g, ' ')} | - | NO | ${load()} |`);
      }
    }
  } finally {
    await killAll();
  }
  const header = `Jobs in parts: ${started}, commit ${commit}, load at the end ${load()} (2 cores).`;
  const markdown = [header, '', ...lines.table, '', ...lines.notes].join('\n');
  writeFileSync(join(OUT, 'parts.md'), `${markdown}\n`);
  // The copy names the commit and, for a partial or modified run, its cases and settings.
  const variant = [...(ONLY ?? []), ...Object.entries(SCALE_ENV).map(([k, v]) => `${k}-${v}`)].join('-');
  writeFileSync(join(OUT, `parts-${variant ? `${variant}-` : ''}${fileTag(commit)}.md`), `${markdown}\n`);
  console.log(`\n${markdown}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchParts();
}
