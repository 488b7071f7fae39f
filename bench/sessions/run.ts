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
 *     BENCH_NODE_FLAGS='--v8-pool-size=2'   the service's node flags instead of the start script's
 *     BENCH_B_FLAGS='...' BENCH_B_ENV='LOG_LEVEL=warn'   also a variant "ours B" with these node flags and
 *                                           environment, in the same rounds (an A/B in one run)
 *     BENCH_B_DIR=/tmp/before               ... or run from another checkout, built (the code before a change:
 *                                           git archive <commit> | tar -x -C /tmp/before, node_modules
 *                                           linked, node scripts/ensure-build.mjs there)
 *     BENCH_CPU_PROF=<dir>                  the service writes a --cpu-prof profile there when it stops
 *     BENCH_RATE=500                        a fixed rate instead of saturation: CPU per request compared at
 *                                           the same pace, which a busy machine moves less than req/s
 *     BENCH_SESSIONS=50                     sessions checked: each connection goes through all of them in turn,
 *                                           so concurrent checks are of different sessions, as from many users
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
/** Requests per second for all connections together; unset: as fast as the server answers. */
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 50);
const ADMIN_PASSWORD = 'Bench-Adm1n-password';
const root = path.resolve(import.meta.dirname, '../..');

interface Measured {
  rps: number;
  p99: number;
  /** The server process's CPU (every thread) per request, in microseconds: unlike req/s, not moved by other users' load. */
  cpuUs: number;
  /** The part of it on threads other than the main one (V8's GC helpers, libuv's pool, the embedded database's thread). */
  otherCpuUs: number;
}

interface Target {
  /** The origin; each request goes to the next of `paths`. */
  url: string;
  paths: string[];
  pid: number;
}

async function measure(target: Target): Promise<Measured> {
  // A short warm-up lets the JIT and the pools settle before measuring.
  const requests = target.paths.map((path) => ({ method: 'GET' as const, path }));
  await autocannon({ url: target.url, requests, connections: CONNECTIONS, duration: 2 });
  const before = await processCpu(target.pid);
  const result = await autocannon({ url: target.url, requests, connections: CONNECTIONS, duration: SECONDS, ...(RATE ? { overallRate: RATE } : {}) });
  const cpu = cpuSince(before, await processCpu(target.pid));
  if (result.errors + result.non2xx > 0) throw new Error(`${target.url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    cpuUs: ((cpu.main + cpu.others) * 1e6) / result.requests.total,
    otherCpuUs: (cpu.others * 1e6) / result.requests.total,
  };
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
async function startService(environment: Record<string, string>, logFile: string, flagsInstead?: string[], dir = root): Promise<Service> {
  const { env, flags: startFlags, script } = startCommand();
  const flags = flagsInstead ?? startFlags;
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...flags, ...profile, script], {
    cwd: dir,
    // The login limit (login routes only, not the check) lets the bench log its SESSIONS sessions in.
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', ADMIN_PASSWORD, RATE_LIMIT_LOGIN: String(SESSIONS + 10), ...environment },
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

/** SESSIONS sessions of the administrator (logins one after another: each is a password hash). */
async function logins(port: number): Promise<string[]> {
  const sessions: string[] = [];
  while (sessions.length < SESSIONS) sessions.push(await login(port));
  return sessions;
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

/** Every target answers the same body for the same session: the floor does the same work, no less. */
async function sameReply(targets: Named[]): Promise<void> {
  const bodies = await Promise.all(targets.map((t) => fetch(`${t.url}${t.paths[0]}`).then((r) => r.text())));
  if (bodies.some((body) => body !== bodies[0]) || !bodies[0]!.startsWith('{"status":0')) {
    throw new Error(`the service and the floor answer differently:\n${bodies.join('\n')}`);
  }
}

interface Named extends Target {
  name: string;
}

/** Rounds over the targets in turn, each round starting one further, so none is always measured first. */
async function compare(kind: 'pg' | 'pglite', targets: Named[]) {
  await sameReply(targets);
  const rounds: { measured: Measured[]; load: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const load = loadavg()[0]!;
    const measured: Measured[] = [];
    for (let i = 0; i < targets.length; i++) {
      const at = (round + i) % targets.length;
      measured[at] = await measure(targets[at]!);
    }
    rounds.push({ measured, load });
    const floor = measured[0]!;
    const parts = targets.map((t, i) => {
      const m = measured[i]!;
      return `${t.name} ${m.rps.toFixed(0)} req/s (p99 ${m.p99} ms, ${m.cpuUs.toFixed(0)} µs CPU/req, ${m.otherCpuUs.toFixed(0)} off the main thread${i > 0 ? `, ${(m.rps / floor.rps).toFixed(2)} of the floor` : ''})`;
    });
    console.log(`  ${kind} round ${round + 1}, load ${load.toFixed(1)}: ${parts.join('; ')}`);
  }
  return targets.map((t, i) => ({
    name: t.name,
    rps: median(rounds.map((r) => r.measured[i]!.rps)),
    cpuUs: median(rounds.map((r) => r.measured[i]!.cpuUs)),
    ratios: rounds.map((r) => r.measured[i]!.rps / r.measured[0]!.rps),
  }));
}

/** The service as `npm start` runs it, and BENCH_B_ENV / BENCH_B_FLAGS' variant when one is given. */
function variants(): { name: string; env: Record<string, string>; flags?: string[]; dir?: string }[] {
  const b = process.env.BENCH_B_ENV !== undefined || process.env.BENCH_B_FLAGS !== undefined || process.env.BENCH_B_DIR !== undefined;
  const env = Object.fromEntries((process.env.BENCH_B_ENV ?? '').split(/\s+/).filter(Boolean).map((pair) => [pair.split('=')[0]!, pair.split('=').slice(1).join('=')]));
  const flags = process.env.BENCH_B_FLAGS?.split(/\s+/).filter(Boolean);
  const dir = process.env.BENCH_B_DIR ? path.resolve(process.env.BENCH_B_DIR) : undefined;
  return [{ name: 'ours', env: {} }, ...(b ? [{ name: 'ours B', env, flags, dir }] : [])];
}

const ourTarget = (name: string, service: Service, sessions: string[]): Named => ({
  name,
  url: `http://127.0.0.1:${service.port}`,
  paths: sessions.map((session) => `/api/202203010900/sessions.php?session=${session}`),
  pid: service.child.pid!,
});

const floorTarget = (port: number, pid: number, sessions: string[]): Named => ({
  name: 'floor',
  url: `http://127.0.0.1:${port}`,
  paths: sessions.map((session) => `/?session=${session}`),
  pid,
});

async function benchPostgres() {
  const db = await freshDatabase('bench_sessions');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'mtcs-bench-sessions-'));
  const children: ChildProcess[] = [];
  try {
    const services: { name: string; service: Service }[] = [];
    for (const [i, variant] of variants().entries()) {
      const service = await startService({ DATABASE_URL: db.url, DATA_DIR: path.join(dataDir, String(i)), ...variant.env }, path.join(dataDir, `service-${i}.log`), variant.flags, variant.dir);
      children.push(service.child);
      services.push({ name: variant.name, service });
    }
    const sessions = await logins(services[0]!.service.port);
    const floor = await startTarget('bench/sessions/floor.ts', ['pg', db.url]);
    children.push(floor.child);
    return await compare('pg', [floorTarget(floor.port, floor.child.pid!, sessions), ...services.map(({ name, service }) => ourTarget(name, service, sessions))]);
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
    // The first start makes the data directory and the session; the floor and every variant get a copy
    // of it while the service is stopped (one process opens a PGlite directory at a time).
    const first = await startService({ DATA_DIR: path.join(dataDir, 'first') }, path.join(dataDir, 'first-start.log'));
    const sessions = await logins(first.port);
    await stop(first.child);
    const copy = (to: string) => cpSync(path.join(dataDir, 'first', 'pgdata'), to, { recursive: true });
    copy(path.join(dataDir, 'floor-pgdata'));
    const services: { name: string; service: Service }[] = [];
    for (const [i, variant] of variants().entries()) {
      copy(path.join(dataDir, String(i), 'pgdata'));
      const service = await startService({ DATA_DIR: path.join(dataDir, String(i)), ...variant.env }, path.join(dataDir, `service-${i}.log`), variant.flags, variant.dir);
      children.push(service.child);
      services.push({ name: variant.name, service });
    }
    const floor = await startTarget('bench/sessions/floor.ts', ['pglite', path.join(dataDir, 'floor-pgdata')]);
    children.push(floor.child);
    return await compare('pglite', [floorTarget(floor.port, floor.child.pid!, sessions), ...services.map(({ name, service }) => ourTarget(name, service, sessions))]);
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
  console.log(`${CONNECTIONS} connections over ${SESSIONS} sessions, 2 s warm-up then ${SECONDS} s each, ${ROUNDS} alternating rounds, ${new Date().toISOString()}`);
  const summary: string[] = [];
  for (const kind of KINDS) {
    const results = kind === 'pg' ? await benchPostgres() : await benchPGlite();
    const [floor, ...ours] = results;
    for (const r of ours) {
      summary.push(
        `${kind === 'pg' ? 'Postgres' : 'PGlite'}: floor ${floor!.rps.toFixed(0)} req/s (${floor!.cpuUs.toFixed(0)} µs CPU/req), ${r.name} ${r.rps.toFixed(0)} req/s (${r.cpuUs.toFixed(0)} µs CPU/req); ` +
          `${r.name} / floor median ${median(r.ratios).toFixed(2)} (rounds ${r.ratios.map((x) => x.toFixed(2)).join(', ')}; target >= 0.90)`,
      );
    }
  }
  console.log(summary.join('\n'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchSessions();
}
