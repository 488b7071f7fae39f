/**
 * Service processes of the parts bench (bench/parts/run.ts) and what it reads about them: the current code's API
 * and worker through test/faults/support.ts (startApi, startWorker), another checkout's API (BENCH_B_DIR) with the
 * same environment, each process's CPU seconds (/proc/<pid>/stat utime + stime, every thread) and peak RSS
 * (/proc/<pid>/status VmHWM), and the job's parts and log lines in its database (the profile of a job in parts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { Client, multipartBody, startApi, startWorker, TZ, CURRENT, type FaultDatabase, type ServiceProcess } from '../../test/faults/support.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TICKS_PER_SECOND = 100;

/**
 * Processes run as the image runs them (`node --v8-pool-size=2 dist/src/server.js`, worker.js), compiled
 * first (scripts/ensure-build.mjs): run.ts builds this checkout and BENCH_B_DIR's before it starts.
 */
const BUILT = true;

/** The current code's API process (WORKERS=1 unless `env` says otherwise) on `db`. */
export function api(db: FaultDatabase, env: Record<string, string> = {}): Promise<ServiceProcess> {
  return startApi({ databaseUrl: db.url, env: { WORKERS: '1', ...env }, built: BUILT });
}

/** The current code's `worker` process (WORKERS=1) on `db`. */
export function worker(db: FaultDatabase, env: Record<string, string> = {}): Promise<ServiceProcess> {
  return startWorker({ databaseUrl: db.url, env: { WORKERS: '1', ...env }, built: BUILT });
}

/** An API process of another checkout (its own src/, node_modules linked, built) with the environment of `api`. */
export async function apiAt(root: string, db: FaultDatabase, env: Record<string, string> = {}): Promise<{ pid: number; baseUrl: string; stop(): Promise<void> }> {
  const service = await startApi({ databaseUrl: db.url, env: { WORKERS: '1', ...env }, root, built: BUILT });
  return { pid: service.pid, baseUrl: service.baseUrl, stop: () => service.stop() };
}

/** CPU seconds the process has used so far, all its threads (user + system); with `tid`, that thread's alone (tid = pid: the main thread). */
export function cpuSeconds(pid: number, tid?: number): number {
  const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** CPU seconds of each live thread of a process, by thread id, with the thread's name (comm). */
export function threadsCpu(pid: number): Map<number, { name: string; seconds: number }> {
  const threads = new Map<number, { name: string; seconds: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      threads.set(Number(tid), { name, seconds: cpuSeconds(pid, Number(tid)) });
    } catch {
      // the thread ended meanwhile
    }
  }
  return threads;
}

/**
 * CPU seconds of a process's threads between two threadsCpu readings: the main thread's, then the busiest
 * others one by one (a training thread, V8's compiler and collector helpers, libuv's pool: Node names them
 * all "node"), and the rest together. Threads that ended in between are not counted.
 */
export function cpuByThread(pid: number, before: ReturnType<typeof threadsCpu>, after: ReturnType<typeof threadsCpu>): string {
  const spent = [...after].map(([tid, t]) => ({ tid, seconds: t.seconds - (before.get(tid)?.seconds ?? 0) }));
  const main = spent.find((t) => t.tid === pid)?.seconds ?? 0;
  const others = spent.filter((t) => t.tid !== pid).sort((a, b) => b.seconds - a.seconds);
  const rest = others.slice(3).reduce((sum, t) => sum + t.seconds, 0);
  return [`main ${main.toFixed(1)} s`, ...others.slice(0, 3).map((t) => `${t.seconds.toFixed(1)} s`), `${others.length - 3 > 0 ? others.length - 3 : 0} more ${rest.toFixed(1)} s`].join(', ');
}

/**
 * CPU seconds spent so far by the whole machine (every core, /proc/stat: user, nice, system, irq, softirq, steal)
 * and by the Postgres server (every process named postgres, and the exited backends its parent waited for): with the
 * processes' own figures, where a job's CPU went, the database included.
 */
export function machineCpu(): { busy: number; postgres: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const busy = (cpu[0]! + cpu[1]! + cpu[2]! + cpu[5]! + cpu[6]! + (cpu[7] ?? 0)) / TICKS_PER_SECOND;
  let postgres = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      // Its own CPU, and (the server's parent process) that of its backends that have exited (cutime, cstime).
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      postgres += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
    } catch {
      // the process ended meanwhile
    }
  }
  return { busy, postgres };
}

/** The process's peak resident set so far (VmHWM), in MB. */
export function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

export const load = () => os.loadavg()[0]!.toFixed(2);

/** The CSV of a long upload (header and rows as panels-data.ts uploadOf gives them). */
export function csvOf(upload: { header: string[]; rows: string[][] }): string {
  const lines = [upload.header.join(',')];
  for (const row of upload.rows) lines.push(row.map((v) => (/[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(','));
  return `${lines.join('\n')}\n`;
}

/** POST /data with one CSV (a long timeout: the 10,000-series upload is about 30 MB); throws unless accepted. */
export async function uploadCsv(client: Client, jobId: number, csv: string): Promise<void> {
  const { body, contentType } = multipartBody({ session: client.session!, job_id: jobId, file: 1 }, csv);
  const res = await fetch(`${client.baseUrl}${CURRENT}/data.php?tz=${TZ}`, { method: 'POST', body, headers: { 'content-type': contentType }, signal: AbortSignal.timeout(600_000) });
  const envelope = (await res.json()) as { status: number; data: unknown };
  if (res.status !== 200 || Number(envelope.status) !== 0) throw new Error(`upload of job ${jobId} refused (HTTP ${res.status}): ${JSON.stringify(envelope.data).slice(0, 500)}`);
}

/** The job's Status code (GET /jobs). */
export async function statusOf(client: Client, jobId: number): Promise<number> {
  const data = (await client.ok('GET', 'jobs', { job_id: jobId })) as { Status: string }[];
  return Number(data[0]!.Status);
}

/** GET /data output=1: the job's output rows, in the service's order. */
export async function outputOf(client: Client, jobId: number): Promise<unknown[]> {
  const reply = await client.call('GET', 'data', { job_id: jobId, output: 1, progress: 0 }, { timeoutMs: 300_000 });
  if (Number(reply.envelope.status) !== 0) throw new Error(`output of job ${jobId}: ${JSON.stringify(reply.envelope.data).slice(0, 300)}`);
  return reply.envelope.data as unknown[];
}

/** GET /jobs_progress progress=2: Advance and the status record. */
export async function progressOf(client: Client, jobId: number): Promise<{ Advance: number; Stat?: { Status_Name: string; Text: string; Explanation: string; Selection: unknown } }> {
  return (await client.ok('GET', 'jobs_progress', { job_id: jobId, progress: 2 })) as { Advance: number; Stat?: { Status_Name: string; Text: string; Explanation: string; Selection: unknown } };
}

export interface PartRow {
  part: number;
  stage: number;
  status: number;
  worker: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  cpu_seconds: number | null;
  queued_at: Date;
  task_bytes: number;
  outcome_bytes: number | null;
}

/**
 * Snapshots the job's job_parts rows every `everyMs` while it runs (the assembly deletes them), keeping each
 * part's last state: which process ran it and when.
 */
export function watchParts(db: FaultDatabase, jobId: number, everyMs = 500): { stop(): Promise<Map<number, PartRow>>; planned(): string } {
  const parts = new Map<number, PartRow>();
  let running = true;
  let planned = '';
  let plan = '';
  const loop = (async () => {
    while (running) {
      try {
        const rows = await db.query<PartRow>('select part, stage, status, worker, started_at, finished_at, cpu_seconds, queued_at, octet_length(task) as task_bytes, octet_length(outcome) as outcome_bytes from job_parts where job_id = $1', [jobId]);
        for (const r of rows) parts.set(r.part, r);
        // The planning thread's own time, in the status record until the assembly rewrites it.
        if (!plan) {
          const row = (
            await db.query<{ plan: number; global: number | null; cpu: number | null }>('select octet_length(plan) as plan, octet_length(global) as global, cpu_seconds as cpu from job_plans where job_id = $1', [jobId])
          )[0];
          if (row) plan = `planning thread CPU ${row.cpu?.toFixed(1) ?? '?'} s; stored plan ${(row.plan / 1e6).toFixed(1)} MB, global task ${((row.global ?? 0) / 1e6).toFixed(1)} MB`;
        }
        if (!planned) planned = (await db.query<{ text: string }>(`select text from stat_records where job_id = $1 and text like 'planned in%' limit 1`, [jobId]))[0]?.text ?? '';
      } catch {
        // A snapshot missed is a snapshot missed; the next one reads the same rows.
      }
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return parts;
    },
    planned: () => [planned, plan].filter(Boolean).join('; '),
  };
}

/** The job's 'training.plan' and 'training.finish' log lines (the runner's own split of the job's time). */
export async function jobLogs(db: FaultDatabase, jobId: number): Promise<{ procedure: string; text: string; pid: number }[]> {
  return db.query<{ procedure: string; text: string; pid: number }>(
    `select procedure, text, pid from logs where procedure in ('training.plan', 'training.finish', 'training.fail', 'training.recover', 'training.assemble') and text like $1 order by id`,
    [`Job ${jobId} %`],
  );
}

/**
 * Where a job in parts spent its time, from the snapshots and the log: planning (upload answered -> first part
 * queued), the global rounds (first round started -> last done), the groups of series scored, the choice across
 * the series and the groups refitted (each stage's first start -> last done), the rest to Finished (assembly,
 * output and records), and how many parts and CPU seconds each process ran.
 */
export function profile(uploadedAt: number, finishedAt: number, parts: Map<number, PartRow>, pids: Record<string, number>): string {
  const all = [...parts.values()];
  if (all.length === 0) return 'no parts seen (trained as one unit)';
  const t = (d: Date | null) => (d ? d.getTime() : NaN);
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const queued = Math.min(...all.map((p) => t(p.queued_at)));
  const rounds = all.filter((p) => p.stage === 1);
  const groups = all.filter((p) => p.stage === 2 || p.stage === 4);
  const scored = all.filter((p) => p.stage === 2);
  const choice = all.filter((p) => p.stage === 3);
  const refitted = all.filter((p) => p.stage === 4);
  const span = (ps: PartRow[]) => (ps.length === 0 ? '-' : `${s(Math.max(...ps.map((p) => t(p.finished_at))) - Math.min(...ps.map((p) => t(p.started_at))))}`);
  const lastDone = Math.max(...all.map((p) => t(p.finished_at)));
  const byWorker = new Map<string, { n: number; cpu: number }>();
  for (const p of all) {
    const pid = p.worker?.split(':')[1] ?? '?';
    const name = Object.entries(pids).find(([, v]) => String(v) === pid)?.[0] ?? `pid ${pid}`;
    const w = byWorker.get(name) ?? { n: 0, cpu: 0 };
    w.n += 1;
    w.cpu += p.cpu_seconds ?? 0;
    byWorker.set(name, w);
  }
  const missing = all.filter((p) => p.finished_at === null).length;
  // Each group's wall against its thread's CPU: a wall well above the CPU is a thread waiting for a core.
  const groupWall = groups.reduce((a, p) => a + (t(p.finished_at) - t(p.started_at)), 0) / 1000;
  const groupCpu = groups.reduce((a, p) => a + (p.cpu_seconds ?? 0), 0);
  const mb = (ps: PartRow[], f: (p: PartRow) => number) => `${(ps.reduce((a, p) => a + f(p), 0) / 1e6).toFixed(1)} MB`;
  const sizes = `tasks ${mb(scored, (p) => Number(p.task_bytes))}, round answers ${mb(rounds, (p) => Number(p.outcome_bytes ?? 0))} (read by every group scored), score answers ${mb(scored, (p) => Number(p.outcome_bytes ?? 0))} (read by the choice), refitted answers ${mb(refitted, (p) => Number(p.outcome_bytes ?? 0))}`;
  return [
    `planning ${s(queued - uploadedAt)}`,
    `${rounds.length} global rounds ${span(rounds)}`,
    `${scored.length} groups scored ${span(scored)}, the choice ${span(choice)}, ${refitted.length} groups refitted ${span(refitted)} (the groups' walls sum to ${groupWall.toFixed(1)} s for ${groupCpu.toFixed(1)} s of CPU)`,
    `last part -> Finished ${s(finishedAt - lastDone)}`,
    sizes,
    `parts by process: ${[...byWorker].map(([k, v]) => `${k} ${v.n} (${v.cpu.toFixed(1)} s CPU)`).join(', ')}`,
    ...(missing > 0 ? [`${missing} parts not seen done`] : []),
  ].join('; ');
}
