/**
 * GET /sessions.php (the session check every front end calls first) of the real service, started as
 * `npm start` starts it (package.json's start script: its environment, node flags and dist/src/server.js,
 * default configuration), against its floor in the same run (issue 35): a plain Node HTTP server doing the
 * same indexed lookup on the same database (bench/sessions/floor.ts). On real Postgres (a fresh database)
 * and on the embedded PGlite (the service's DATA_DIR; the floor opens a copy of its pgdata). Both processes
 * run side by side and are loaded in turn, the order swapped each round, so a busy machine slows both
 * alike; each round's ratio is ours / floor.
 *
 *   npm run bench sessions
 *     BENCH_ROUNDS=3 BENCH_SECONDS=8 BENCH_CONNECTIONS=50 BENCH_SESSIONS_DB=pg,pglite
 *     BENCH_NODE_FLAGS='--v8-pool-size=2'   the service's node flags instead of the start script's (A/B)
 *     BENCH_CPU_PROF=<dir>                  the service writes a --cpu-prof profile there when it stops
 * Target: ours / floor >= 0.90 on both databases.
 */
import autocannon from 'autocannon';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuSince, processCpu } from '../footprint/process-cpu.js';
import { freshDatabase, startTarget, stop } from '../support.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const KINDS = (process.env.BENCH_SESSIONS_DB ?? 'pg,pglite').split(',') as ('pg' | 'pglite')[];
const ADMIN_PASSWORD = 'Bench-Adm1n-password';
const root = path.resolve(import.meta.dirname, '../..');

interface Measured {
  rps: number;
  p99: number;
  /** The server process's CPU (every thread) per request, in microseconds: unlike req/s, not moved by other users' load. */
  cpuUs: number;
}

interface Target {
  url: string;
  pid: number;
}

async function measure(target: Target): Promise<Measured> {
  // A short warm-up lets the JIT and the pools settle before measuring.
  await autocannon({ url: target.url, connections: CONNECTIONS, duration: 2 });
  const before = await processCpu(target.pid);
  const result = await autocannon({ url: target.url, connections: CONNECTIONS, duration: SECONDS });
  const cpu = cpuSince(before, await processCpu(target.pid));
  if (result.errors + result.non2xx > 0) throw new Error(`${target.url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  return { rps: result.requests.average, p99: result.latency.p99, cpuUs: ((cpu.main + cpu.others) * 1e6) / result.requests.total };
}

/** package.json's start script as environment, node flags and script: what `npm start` runs. */
function startCommand(): { env: Record<string, string>; flags: string[]; script: string } {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0] && /^\w+=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  if (words.shift() !== 'node') throw new Error(`the start script does not run node: ${pkg.scripts.start}`);
  const script = words.pop()!;
  const flags = process.env.BENCH_NODE_FLAGS !== undefined ? process.env.BENCH_NODE_FLAGS.split(/\s+/).filter(Boolean) : words;
  return { env, flags, script };
}

interface Service {
  child: ChildProcess;
  port: number;
}

/** The service as `npm start` runs it, on 127.0.0.1 and a free port; its output goes to `logFile`. */
async function startService(environment: Record<string, string>, logFile: string): Promise<Service> {
  const { env, flags, script } = startCommand();
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...flags, ...profile, script], {
    cwd: root,
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', ADMIN_PASSWORD, ...environment },
    stdio: ['ignore', out, out],
  });
  for (let waited = 0; waited < 120_000; waited += 50) {
    const match = /Listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(readFileSync(logFile, 'utf8'));
    if (match) return { child, port: Number(match[1]) };
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`the service did not start; its output:\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
}

async function login(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/api/202203010900/sessions.php`, {
    method: 'POST',
    body: new URLSearchParams({ email: 'admin@localhost', password: ADMIN_PASSWORD }),
  });
  const reply = (await response.json()) as { status: number; data: [{ Hash: string }] };
  if (reply.status !== 0) throw new Error(`login failed: ${JSON.stringify(reply)}`);
  return reply.data[0].Hash;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Both answer the same body for the same session: the floor does the same work, no less. */
async function sameReply(ours: Target, floor: Target): Promise<void> {
  const [a, b] = await Promise.all([fetch(ours.url).then((r) => r.text()), fetch(floor.url).then((r) => r.text())]);
  if (a !== b || !a.startsWith('{"status":0')) throw new Error(`the service and the floor answer differently:\n${a}\n${b}`);
}

async function compare(kind: 'pg' | 'pglite', ours: Target, floor: Target) {
  await sameReply(ours, floor);
  const rounds: { ours: Measured; floor: Measured; ratio: number; load: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const load = loadavg()[0]!;
    const first = round % 2 === 0 ? floor : ours;
    const a = await measure(first);
    const b = await measure(first === floor ? ours : floor);
    const [f, o] = first === floor ? [a, b] : [b, a];
    rounds.push({ ours: o, floor: f, ratio: o.rps / f.rps, load });
    console.log(
      `  ${kind} round ${round + 1}: floor ${f.rps.toFixed(0)} req/s (p99 ${f.p99} ms, ${f.cpuUs.toFixed(0)} µs CPU/req), ` +
        `ours ${o.rps.toFixed(0)} req/s (p99 ${o.p99} ms, ${o.cpuUs.toFixed(0)} µs CPU/req), ours / floor ${(o.rps / f.rps).toFixed(2)}, load ${load.toFixed(1)}`,
    );
  }
  return rounds;
}

const ourTarget = (service: Service, session: string): Target => ({
  url: `http://127.0.0.1:${service.port}/api/202203010900/sessions.php?session=${session}`,
  pid: service.child.pid!,
});

async function benchPostgres() {
  const db = await freshDatabase('bench_sessions');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'mtcs-bench-sessions-'));
  const children: ChildProcess[] = [];
  try {
    const service = await startService({ DATABASE_URL: db.url, DATA_DIR: dataDir }, path.join(dataDir, 'service.log'));
    children.push(service.child);
    const session = await login(service.port);
    const floor = await startTarget('bench/sessions/floor.ts', ['pg', db.url]);
    children.push(floor.child);
    return await compare('pg', ourTarget(service, session), { url: `http://127.0.0.1:${floor.port}/?session=${session}`, pid: floor.child.pid! });
  } finally {
    for (const child of children.reverse()) await stop(child);
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function benchPGlite() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'mtcs-bench-sessions-'));
  const children: ChildProcess[] = [];
  try {
    // The first start makes the data directory and the session; the floor gets a copy of it while the
    // service is stopped (one process opens a PGlite directory at a time).
    const first = await startService({ DATA_DIR: dataDir }, path.join(dataDir, 'first-start.log'));
    const session = await login(first.port);
    await stop(first.child);
    cpSync(path.join(dataDir, 'pgdata'), path.join(dataDir, 'floor-pgdata'), { recursive: true });
    const service = await startService({ DATA_DIR: dataDir }, path.join(dataDir, 'service.log'));
    children.push(service.child);
    const floor = await startTarget('bench/sessions/floor.ts', ['pglite', path.join(dataDir, 'floor-pgdata')]);
    children.push(floor.child);
    return await compare('pglite', ourTarget(service, session), { url: `http://127.0.0.1:${floor.port}/?session=${session}`, pid: floor.child.pid! });
  } finally {
    for (const child of children.reverse()) await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchSessions() {
  // What `npm start` does first: dist/ compiled from the current sources.
  const build = spawnSync(process.execPath, [path.join(root, 'scripts/ensure-build.mjs')], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('scripts/ensure-build.mjs failed');
  const { env, flags } = startCommand();
  console.log(`\nGET /sessions.php: the service (${Object.entries(env).map(([k, v]) => `${k}=${v} `).join('')}node ${flags.join(' ')}) against its floor (bench/sessions/floor.ts)`);
  console.log(`${CONNECTIONS} connections, 2 s warm-up then ${SECONDS} s each, ${ROUNDS} alternating rounds, ${new Date().toISOString()}`);
  const summary: string[] = [];
  for (const kind of KINDS) {
    const rounds = kind === 'pg' ? await benchPostgres() : await benchPGlite();
    const ratios = rounds.map((r) => r.ratio);
    summary.push(
      `${kind === 'pg' ? 'Postgres' : 'PGlite  '}  floor ${median(rounds.map((r) => r.floor.rps)).toFixed(0)} req/s ${median(rounds.map((r) => r.floor.cpuUs)).toFixed(0)} µs CPU/req, ` +
        `ours ${median(rounds.map((r) => r.ours.rps)).toFixed(0)} req/s ${median(rounds.map((r) => r.ours.cpuUs)).toFixed(0)} µs CPU/req; ` +
        `ours / floor median ${median(ratios).toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}; target >= 0.90)`,
    );
  }
  console.log(summary.join('\n'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchSessions();
}
