/**
 * Training memory (issue 22, point 2): the server on the embedded database (`src/server.ts`, WORKERS=1,
 * a fresh DATA_DIR, the README's default) uploads and trains a numeric CSV of each size, while another
 * user checks their session (GET /sessions.php) 20 times a second. Per size: upload and training seconds,
 * how the job ended, the process's peak RSS (VmHWM) and its RSS sampled while training, and the p99 of
 * the session check while training against its idle p99 measured just before, in the same process; and the
 * server's CPU seconds in the upload and the training (main thread, other threads: process-cpu.ts), which
 * the machine's other load does not move as it moves the seconds.
 *
 *   npm run bench training-memory                 BENCH_TRAIN_SIZES=9,150 (MB; 9 MB is 200,000 rows)
 *   BENCH_ROOT=/path/to/other/checkout npm run bench training-memory   the same against another tree
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSince, describeCpu, processCpu } from './process-cpu.js';

const here = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const root = process.env.BENCH_ROOT ?? here;
const SIZES = (process.env.BENCH_TRAIN_SIZES ?? '9,150').split(',').map(Number);
const API = '/api/202203010900';
const ADMIN = { email: 'bench@example.com', password: 'Bench-Passw0rd!' };
const PROBE_EVERY_MS = 50;
const IDLE_PROBES = 200;

async function procStatus(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/**
 * `megabytes` (10^6 bytes) of x1..x4 and y = 3 x1 + 2 x2 + x3 / 100 - x4 + noise, about 45 bytes a row
 * (9 MB is the issue's 200,000 rows); the last 5 rows have y empty (to forecast). Answers the rows.
 */
async function writeCsv(path: string, megabytes: number): Promise<number> {
  const bytes = megabytes * 1e6;
  let written = 0;
  let rows = 0;
  let s = 9;
  const rand = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const out = createWriteStream(path);
  let chunk = 'x1,x2,x3,x4,y\n';
  for (let hidden = 5; hidden > 0; rows++) {
    const x1 = rand() * 100;
    const x2 = rand() * 10;
    const x3 = rand() * 1000;
    const x4 = rand() * 50;
    if (written >= bytes) hidden--;
    const y = written >= bytes ? '' : (3 * x1 + 2 * x2 + x3 / 100 - x4 + rand()).toFixed(4);
    const line = `${x1.toFixed(5)},${x2.toFixed(6)},${x3.toFixed(4)},${x4.toFixed(5)},${y}\n`;
    written += line.length;
    chunk += line;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
      chunk = '';
    }
  }
  await new Promise<void>((resolve, reject) => out.end(chunk, (e?: Error | null) => (e ? reject(e) : resolve())));
  return rows;
}

async function call<T>(port: number, method: string, path: string, params: Record<string, string | number>, body?: Blob): Promise<T> {
  const query = new URLSearchParams(Object.entries({ tz: 'UTC', ...params }).map(([k, v]): [string, string] => [k, String(v)]));
  const url = `http://127.0.0.1:${port}${API}${path}`;
  let res: Response;
  if (body) {
    const form = new FormData();
    for (const [k, v] of query) form.set(k, v);
    form.set('Servicefile', body, 'data.csv');
    res = await fetch(url, { method, body: form });
  } else res = method === 'GET' ? await fetch(`${url}?${query.toString()}`) : await fetch(url, { method, body: query });
  const reply = (await res.json()) as { status: number; data: unknown };
  if (Number(reply.status) !== 0) throw new Error(`${method} ${path}: ${JSON.stringify(reply.data)}`);
  return reply.data as T;
}

async function start(dataDir: string): Promise<{ child: ChildProcess; port: number }> {
  const port = 21000 + Math.floor(Math.random() * 2000);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', WORKERS: '1', LOG_LEVEL: 'warn', ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => String(chunk).includes('Listening on') && resolve());
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { child, port };
}

const p99 = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] ?? NaN;

/** Session checks every PROBE_EVERY_MS until `until` resolves; answers each one's milliseconds. */
async function probe(port: number, session: string, until: Promise<unknown> | number): Promise<number[]> {
  const times: number[] = [];
  const t0 = performance.now();
  const slow: string[] = [];
  let done = false;
  if (typeof until !== 'number') void until.finally(() => (done = true));
  while (!done && (typeof until !== 'number' || times.length < until)) {
    const t = performance.now();
    await call(port, 'GET', '/sessions.php', { session });
    times.push(performance.now() - t);
    if (process.env.BENCH_SLOW && times.at(-1)! > Number(process.env.BENCH_SLOW)) slow.push(`${((t - t0) / 1000).toFixed(1)}s:${times.at(-1)!.toFixed(0)}`);
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
  }
  if (slow.length > 0) console.log(`  slow checks (at: ms): ${slow.join(' ')}`);
  return times;
}

async function runSize(megabytes: number) {
  const dir = await mkdtemp(join(tmpdir(), 'bench-training-memory-'));
  const csvPath = join(dir, 'data.csv');
  const rows = await writeCsv(csvPath, megabytes);
  const fileMb = (await stat(csvPath)).size / 1e6;
  const { child, port } = await start(join(dir, 'data'));
  const pid = child.pid!;
  const exited = new Promise<number | null>((r) => child.once('exit', (code, signal) => r(code ?? (signal ? -1 : null))));
  try {
    const admin = (await call<{ Hash: string }[]>(port, 'POST', '/sessions.php', ADMIN))[0]!.Hash;
    const email = `other-${Date.now()}@example.com`;
    await call(port, 'POST', '/users.php', { name: 'Other', lastname: 'User', email, password: 'Other-Passw0rd!', phonenumber: '600000000' });
    const other = (await call<{ Hash: string }[]>(port, 'POST', '/sessions.php', { email, password: 'Other-Passw0rd!' }))[0]!.Hash;
    await fetch(`http://127.0.0.1:${port}/202111101200/subscriptions.php`, { method: 'POST', body: new URLSearchParams({ session: admin, app: 'forecast' }) });
    const idle = await probe(port, other, IDLE_PROBES);
    const job = await call<{ job_id: number }>(port, 'POST', '/jobs.php', { session: admin, app_name: 'forecast', newTraining: 1 });
    const jobId = Number(job.job_id);

    let rssMax = 0;
    const sampler = setInterval(() => void procStatus(pid).then((s) => (rssMax = Math.max(rssMax, s.rss)), () => undefined), 100);
    const cpuAtUpload = await processCpu(pid);
    const uploadStart = performance.now();
    await call(port, 'POST', '/data.php', { session: admin, job_id: jobId, file: 1 }, new Blob([await readFile(csvPath)]));
    const uploadS = (performance.now() - uploadStart) / 1000;
    const afterUpload = await procStatus(pid);
    const rssAfterUpload = rssMax;
    rssMax = 0;
    const cpuAtTraining = await processCpu(pid);
    const uploadCpu = cpuSince(cpuAtUpload, cpuAtTraining);

    const trainStart = performance.now();
    const ended = (async () => {
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null) return { Status: 'process died' };
        const [record] = await call<{ Status: string }[]>(port, 'GET', '/jobs.php', { session: admin, job_id: jobId });
        if (record && ['3', '4', '5'].includes(record.Status)) return record;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const training = await probe(port, other, Promise.race([ended, exited]));
    const record = await ended.catch((e: unknown): { Status: string } => ({ Status: `error ${(e as Error).message}` }));
    const trainS = (performance.now() - trainStart) / 1000;
    const trainingCpu = cpuSince(cpuAtTraining, await processCpu(pid).catch(() => cpuAtTraining));
    clearInterval(sampler);
    const final = await procStatus(pid);
    const stats = await call<{ Text?: string; text?: string }[]>(port, 'GET', '/stat.php', { session: admin, terminate: 0, job_id: jobId, progress_type: 2 }).catch(() => []);
    return {
      megabytes: Math.round(fileMb),
      rows,
      uploadS,
      trainS,
      uploadCpu,
      trainingCpu,
      status: record.Status === '3' ? 'Finished' : record.Status === '4' ? 'Failed' : record.Status,
      reason: /failed: ((?:[^"\\]|\\.)*)/.exec(JSON.stringify(stats))?.[1] ?? '',
      set: /training set: [^"]*/.exec(JSON.stringify(stats))?.[0] ?? '',
      rssAfterUploadMb: Math.max(rssAfterUpload, afterUpload.rss),
      rssTrainingMb: rssMax,
      hwmMb: final.hwm,
      idleP99: p99(idle),
      trainingP99: p99(training),
      trainingMax: Math.max(...training),
      probes: training.length,
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchTrainingMemory() {
  console.log(`training memory: server on the embedded database, WORKERS=1, tree ${root}`);
  for (const size of SIZES) {
    const r = await runSize(size);
    console.log(
      `\n${r.megabytes} MB, ${r.rows} rows: upload ${r.uploadS.toFixed(1)} s, training ${r.trainS.toFixed(1)} s, job ${r.status}${r.reason ? ` (${r.reason})` : ''}\n` +
        `  ${r.set}\n` +
        `  upload ${describeCpu(r.uploadCpu)}; training ${describeCpu(r.trainingCpu)}\n` +
        `  RSS after upload ${Math.round(r.rssAfterUploadMb)} MB, max while training ${Math.round(r.rssTrainingMb)} MB, peak (VmHWM) ${Math.round(r.hwmMb)} MB\n` +
        `  session check p99: idle ${r.idleP99.toFixed(1)} ms, while training ${r.trainingP99.toFixed(1)} ms (${(r.trainingP99 / r.idleP99).toFixed(2)} x idle, max ${r.trainingMax.toFixed(0)} ms, ${r.probes} checks)`,
    );
  }
}
