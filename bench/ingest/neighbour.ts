/**
 * What one uploader costs everyone else on the embedded database (issue 22): another user's session
 * check (GET /sessions.php) timed back to back, idle (before and after), while a 50 MB CSV is uploaded at full speed and
 * stored (curl -F), and while an upload stalls after half its file (session, job_id and 25 MB sent, then
 * nothing); then the issue's hostile file (one quoted 20 MB cell over 20,000 lines) and the server's RSS
 * around it. Figures are ratios to the idle latency of the same run. BENCH_ROOT runs another checkout's
 * server (e.g. an export of the commit before the change), with this script and the same file.
 *
 *   npx tsx bench/ingest/neighbour.ts            (BENCH_ROOT=/path/to/other/checkout to compare)
 */
import { execFile } from 'node:child_process';
import { createReadStream, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateCsv } from './generate.js';
import { BENCH_ADMIN as ADMIN, startServer } from './server.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = process.env.BENCH_ROOT ?? join(here, '..', '..');
const out = join(here, '..', '.out');
const run = promisify(execFile);
const API = '/api/202203010900';

const rssMb = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

async function call(port: number, method: string, resource: string, fields: Record<string, string>, query: Record<string, string> = {}) {
  const qs = new URLSearchParams({ tz: 'Europe/Madrid', ...query }).toString();
  const res = await fetch(`http://127.0.0.1:${port}${API}/${resource}.php?${qs}`, { method, body: new URLSearchParams(fields) });
  const body = (await res.json()) as { status: number; data: any };
  if (body.status !== 0) throw new Error(`${method} ${resource}: ${JSON.stringify(body.data)}`);
  return body.data;
}

const login = async (port: number, email: string, password: string) => (await call(port, 'POST', 'sessions', { email, password }))[0].Hash as string;

/** One session check; its latency in ms, or Infinity when it took longer than `timeoutMs`. */
async function check(port: number, session: string, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  try {
    const res = await fetch(`http://127.0.0.1:${port}${API}/sessions.php?session=${session}`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.json();
    return performance.now() - t0;
  } catch {
    return Infinity;
  }
}

function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const round = (v: number) => (Number.isFinite(v) ? Number(v.toFixed(1)) : 'timed out');
  return { n: values.length, p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted.at(-1)!), timedOut: values.filter((v) => !Number.isFinite(v)).length };
}

/** Session checks back to back until `done` settles; NEIGHBOUR_TRACE=<file>: each one's start (epoch ms) and latency, a JSON line each. */
async function checksUntil(port: number, session: string, done: Promise<unknown>, timeoutMs: number): Promise<number[]> {
  let finished = false;
  void done.finally(() => (finished = true));
  const latencies: number[] = [];
  const trace: string[] = [];
  while (!finished) {
    const at = Date.now();
    latencies.push(await check(port, session, timeoutMs));
    trace.push(JSON.stringify({ at, ms: latencies.at(-1) }));
  }
  if (process.env.NEIGHBOUR_TRACE) writeFileSync(process.env.NEIGHBOUR_TRACE, `${trace.join('\n')}\n`);
  return latencies;
}

/** Sends the request head, session, job_id and the first `bytes` of the file, then nothing until closed. */
async function stall(port: number, session: string, jobId: number, file: string, bytes: number) {
  const boundary = '----benchstall';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="session"\r\n\r\n${session}\r\n--${boundary}\r\nContent-Disposition: form-data; name="job_id"\r\n\r\n${jobId}\r\n--${boundary}\r\nContent-Disposition: form-data; name="Servicefile"; filename="stalled.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`POST ${API}/data.php?tz=Europe/Madrid HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + bytes * 2}\r\n\r\n${head}`);
  for await (const chunk of createReadStream(file, { end: bytes - 1 })) if (!socket.write(chunk as Buffer)) await new Promise((r) => socket.once('drain', r));
  return socket;
}

async function main() {
  mkdirSync(out, { recursive: true });
  const file = join(out, 'neighbour-50mb.csv');
  await generateCsv(file, 720_000);
  const size = statSync(file).size;
  const dataDir = join(out, 'neighbour-pglite-data');
  rmSync(dataDir, { recursive: true, force: true });
  const port = 19000 + Math.floor(Math.random() * 1000);
  const server = await startServer({ MAX_UPLOAD_MB: '200', DATABASE_URL: '', DATA_DIR: dataDir }, port, root);
  try {
    const uploader = await login(port, ADMIN.email, ADMIN.password);
    const email = `neighbour-${Date.now()}@bench.example`;
    await call(port, 'POST', 'users', { name: 'Other', lastname: 'User', email, password: 'Other-Passw0rd', phonenumber: '600000000' });
    const other = await login(port, email, 'Other-Passw0rd');
    const newJob = async () => Number((await call(port, 'POST', 'jobs', { session: uploader, app_name: 'forecast', newTraining: '1' }, { session: uploader })).job_id);

    for (let i = 0; i < 100; i++) await check(port, other, 5000); // warm-up
    // Idle is measured before and after the uploads (the machine is shared: both halves see its noise).
    const idle: number[] = [];
    for (let i = 0; i < 200; i++) idle.push(await check(port, other, 5000));

    const jobId = await newJob();
    const t0 = performance.now();
    const upload = run('curl', ['-s', '-F', `session=${uploader}`, '-F', `job_id=${jobId}`, '-F', `Servicefile=@${file};type=text/csv`, `http://127.0.0.1:${port}${API}/data.php?tz=Europe/Madrid`], { maxBuffer: 1 << 20 });
    const during = await checksUntil(port, other, upload, 30_000);
    const reply = JSON.parse((await upload).stdout) as { status: number; data: string };
    const uploadSeconds = (performance.now() - t0) / 1000;

    const stalledJob = await newJob();
    const socket = await stall(port, uploader, stalledJob, file, Math.floor(size / 2));
    await new Promise((r) => setTimeout(r, 500));
    const stalled: number[] = [];
    for (let i = 0; i < 5; i++) stalled.push(await check(port, other, 5000));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 1000));
    for (let i = 0; i < 200; i++) idle.push(await check(port, other, 5000));

    // The issue's hostile file: one quoted 20 MB cell over 20,000 lines; the server's RSS before and after.
    const cellFile = join(out, 'neighbour-cell.csv');
    writeFileSync(cellFile, `a,b\n1,"${`${'y'.repeat(1023)}\n`.repeat(20_000)}"\n`);
    const rssBefore = rssMb(server.pid!);
    const cellJob = await newJob();
    // A refusal may come (and the connection close) before curl has sent the whole file: curl then exits 55.
    const sent = await run('curl', ['-s', '-F', `session=${uploader}`, '-F', `job_id=${cellJob}`, '-F', `Servicefile=@${cellFile};type=text/csv`, `http://127.0.0.1:${port}${API}/data.php?tz=Europe/Madrid`], {
      maxBuffer: 1 << 20,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const cellReply = JSON.parse(sent.stdout) as { status: number; data: string };
    const hostileCell = { reply: cellReply.data, rssBeforeMb: rssBefore, rssAfterMb: rssMb(server.pid!) };

    const idleStats = stats(idle);
    const ratio = (s: ReturnType<typeof stats>, key: 'p50' | 'p99' | 'max') => (typeof s[key] === 'number' && typeof idleStats[key] === 'number' ? Number((s[key] / idleStats[key]).toFixed(1)) : 'timed out');
    const duringStats = stats(during);
    const stalledStats = stats(stalled);
    console.log(
      JSON.stringify(
        {
          root,
          file: `${(size / 1024 / 1024).toFixed(1)} MB, 720000 rows`,
          upload: { seconds: Number(uploadSeconds.toFixed(1)), reply: reply.data },
          idle: idleStats,
          duringUpload: { ...duringStats, p50xIdle: ratio(duringStats, 'p50'), p99xIdle: ratio(duringStats, 'p99'), maxXIdle: ratio(duringStats, 'max') },
          whileStalled: { ...stalledStats, p99xIdle: ratio(stalledStats, 'p99') },
          hostileCell,
        },
        null,
        2,
      ),
    );
  } finally {
    server.kill('SIGKILL');
    await new Promise((r) => server.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
