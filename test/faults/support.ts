import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/**
 * Helpers of the fault suite: real service processes (`node --import tsx src/server.ts` and
 * `src/worker.ts`) on a fresh Postgres database, so a test can kill -9 them, restart them and take
 * their database away, then look at what survived through HTTP and SQL.
 */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CURRENT = '/api/202203010900';
export const OLDER = '/202111101200';
export const TZ = 'Europe/Madrid';
/** The machine's Postgres (trust auth); FAULTS_DATABASE_URL overrides it. */
export const ADMIN_DATABASE_URL = process.env.FAULTS_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const ADMIN_EMAIL = 'admin@faults.example';
export const ADMIN_PASSWORD = 'Fault-Admin-Passw0rd';
export const SECRET_KEY = 'fault-suite-secret-key-0123456789abcdef';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it answers something other than undefined, or fails naming `what`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError instanceof Error ? ` (last error: ${lastError.message})` : ''}`);
    await sleep(everyMs);
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

// ---------- databases ----------

export interface FaultDatabase {
  name: string;
  url: string;
  /** A small pool on the database for the tests' own assertions. */
  pool: pg.Pool;
  query<R extends pg.QueryResultRow = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

/** Creates `mtcs_fault_<random>` on the server of `adminUrl`; drop() removes it (force) again. */
export async function createDatabase(adminUrl = ADMIN_DATABASE_URL): Promise<FaultDatabase> {
  const name = `mtcs_fault_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const pool = new pg.Pool({ connectionString: url, max: 3 });
  // The outage test stops the server under this pool: idle clients erroring must not crash the run.
  pool.on('error', () => undefined);
  return {
    name,
    url,
    pool,
    async query(text, values) {
      return (await pool.query(text, values)).rows;
    },
    async drop() {
      await pool.end().catch(() => undefined);
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      try {
        await a.query(`drop database if exists ${name} with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}

/**
 * A throwaway Postgres server of the machine's version in a temporary directory, for the test that
 * stops and starts the database: stopping the machine's shared server would break every other suite
 * (and engineer) using it at the same time. As root it runs as the `postgres` user.
 */
export interface PrivatePostgres {
  port: number;
  url: string;
  stop(mode?: 'fast' | 'immediate'): void;
  start(): void;
  destroy(): void;
}

export function startPrivatePostgres(): PrivatePostgres {
  const versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('no Postgres server binaries under /usr/lib/postgresql');
  const bin = `/usr/lib/postgresql/${versions[0]}/bin`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mtcs-fault-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, Number(run('id', ['-u', 'postgres']).trim()), Number(run('id', ['-g', 'postgres']).trim()));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const data = path.join(dir, 'data');
  const as = (command: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args));
  as(`${bin}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const pgctl = (args: string[]) => as(`${bin}/pg_ctl`, ['-D', data, '-w', '-t', '30', ...args]);
  const start = () => void pgctl(['-o', options, '-l', path.join(dir, 'server.log'), 'start']);
  start();
  let running = true;
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop(mode = 'fast') {
      pgctl(['-m', mode, 'stop']);
      running = false;
    },
    start() {
      start();
      running = true;
    },
    destroy() {
      if (running) {
        try {
          pgctl(['-m', 'immediate', 'stop']);
        } catch {
          // Already gone; the directory goes anyway.
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function run(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}): ${result.stderr || result.stdout}`);
  return result.stdout;
}

// ---------- service processes ----------

export interface ServiceProcess {
  readonly kind: 'api' | 'worker';
  readonly pid: number;
  /** http://127.0.0.1:<port> for an API process. */
  readonly baseUrl: string;
  readonly child: ChildProcess;
  /** The process's stdout and stderr so far (for failure messages). */
  output(): string;
  /** kill -9, and waits until the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful shutdown), and waits until the process is gone. */
  stop(): Promise<void>;
  readonly exited: Promise<number | null>;
}

export interface SpawnOptions {
  databaseUrl: string;
  env?: Record<string, string>;
  /** The checkout whose src/ runs (default this one): benchmarks start another commit's service with it. */
  root?: string;
  /**
   * Run the compiled service as the image does (`node --v8-pool-size=2 dist/src/server.js`, or worker.js;
   * dist/ must be built), not the sources through tsx: benchmarks measure what production runs. BENCH_NODE_FLAGS
   * replaces the image's node flags (a benchmark's A/B of a V8 setting).
   */
  built?: boolean;
}

const running = new Set<ServiceProcess>();
// A test run that ends abruptly (timeout, crash) must not leave service processes behind.
process.once('exit', () => {
  for (const service of running) service.child.kill('SIGKILL');
});

/** The environment a test process gets: the service's own settings only, nothing of the runner's. */
function serviceEnv(options: SpawnOptions, extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: os.tmpdir(),
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: options.databaseUrl,
    DATA_DIR: path.join(os.tmpdir(), `mtcs-fault-data-${randomBytes(4).toString('hex')}`),
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    SECRET_KEY,
    SMTP_URL: '',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_LOGIN: '100000',
    WORKERS: '0',
    ...extra,
    ...options.env,
  };
}

function spawnService(kind: 'api' | 'worker', options: SpawnOptions, ready: RegExp, timeoutMs = 60_000): Promise<ServiceProcess> {
  const name = kind === 'api' ? 'server' : 'worker';
  const args = options.built ? [...(process.env.BENCH_NODE_FLAGS ?? '--v8-pool-size=2').split(' ').filter(Boolean), `dist/src/${name}.js`] : ['--import', 'tsx', `src/${name}.ts`];
  const env = serviceEnv(options, kind === 'worker' ? { WORKERS: '1' } : {});
  const child = spawn(process.execPath, args, {
    cwd: options.root ?? ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      // A DATA_DIR of our own making goes with the process; one passed in `env` is the caller's to keep.
      if (!options.env?.DATA_DIR) rmSync(env.DATA_DIR!, { recursive: true, force: true });
      resolve(code ?? (signal ? -1 : null));
    }),
  );
  return new Promise<ServiceProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${kind} did not start within ${timeoutMs} ms:\n${output.slice(-3000)}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      keep(chunk);
      const match = ready.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.stdout.on('data', keep);
      const service: ServiceProcess = {
        kind,
        pid: child.pid!,
        baseUrl: kind === 'api' ? `http://127.0.0.1:${match[1]}` : '',
        child,
        exited,
        output: () => output,
        async kill9() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
          running.delete(service);
        },
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
          await exited;
          clearTimeout(forced);
          running.delete(service);
        },
      };
      running.add(service);
      resolve(service);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', keep);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${kind} exited (${code}) before it was ready:\n${output.slice(-3000)}`));
    });
  });
}

/** An API process; ready when it prints "Listening on". WORKERS=0 unless `env` says otherwise. */
export function startApi(options: SpawnOptions): Promise<ServiceProcess> {
  return spawnService('api', options, /Listening on http:\/\/[^:\s]+:(\d+)/);
}

/** A worker-only process (`npm run worker`) with WORKERS=1 unless `env` says otherwise. */
export function startWorker(options: SpawnOptions): Promise<ServiceProcess> {
  return spawnService('worker', options, /Worker \S+ training with \d+ thread/);
}

/** Kills every process a test left running (afterAll). */
export async function killAll(): Promise<void> {
  await Promise.all([...running].map((p) => p.kill9()));
}

// ---------- HTTP ----------

export interface Envelope {
  status: number | string;
  data: any;
}

export interface Reply {
  http: number;
  envelope: Envelope;
  ms: number;
}

export type Fields = Record<string, string | number>;

/** A legacy front end over fetch: GET fields in the query, other methods as an urlencoded form. */
export class Client {
  constructor(
    public baseUrl: string,
    public session?: string,
  ) {}

  async call(method: string, resource: string, fields: Fields = {}, options: { version?: string; timeoutMs?: number; query?: Fields } = {}): Promise<Reply> {
    const all: Fields = { ...(this.session ? { session: this.session } : {}), tz: TZ, ...fields };
    const encode = (f: Fields) => new URLSearchParams(Object.entries(f).map(([k, v]): [string, string] => [k, String(v)])).toString();
    const url = `${this.baseUrl}${options.version ?? CURRENT}/${resource}.php`;
    const started = Date.now();
    const res =
      method === 'GET'
        ? await fetch(`${url}?${encode(all)}`, { signal: AbortSignal.timeout(options.timeoutMs ?? 30_000) })
        : await fetch(options.query ? `${url}?${encode(options.query)}` : url, {
            method,
            body: encode(all),
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
          });
    const text = await res.text();
    let envelope: Envelope;
    try {
      envelope = JSON.parse(text) as Envelope;
    } catch {
      throw new Error(`${method} ${resource}: reply is not JSON (HTTP ${res.status}): ${text.slice(0, 300)}`);
    }
    return { http: res.status, envelope, ms: Date.now() - started };
  }

  /** A call that must succeed; answers its `data`. */
  async ok(method: string, resource: string, fields: Fields = {}, options: { version?: string; query?: Fields } = {}): Promise<any> {
    const reply = await this.call(method, resource, fields, options);
    if (reply.http !== 200 || Number(reply.envelope.status) !== 0) {
      throw new Error(`${method} ${resource} ${JSON.stringify(fields)} failed (HTTP ${reply.http}): ${JSON.stringify(reply.envelope.data)}`);
    }
    return reply.envelope.data;
  }

  async login(email: string, password: string): Promise<string> {
    const data = await this.ok('POST', 'sessions', { email, password });
    this.session = data[0].Hash as string;
    return this.session;
  }

  /** The same session against another process. */
  on(baseUrl: string): Client {
    return new Client(baseUrl, this.session);
  }
}

/** Registers a consumer through POST /users, logs in, and subscribes it to `app`. */
export async function newConsumer(baseUrl: string, app = 'forecast'): Promise<Client> {
  const client = new Client(baseUrl);
  const email = `consumer-${randomBytes(4).toString('hex')}@faults.example`;
  const password = 'Consumer-Passw0rd';
  await client.ok('POST', 'users', { name: 'Fault', lastname: 'Tester', email, password, phonenumber: '600000000' });
  await client.login(email, password);
  await client.ok('POST', 'subscriptions', { app }, { version: OLDER });
  return client;
}

/** POST /jobs: a new job (and training) of `app`; answers the job id. */
export async function newJob(client: Client, app = 'forecast'): Promise<number> {
  const data = await client.ok('POST', 'jobs', {}, { query: { session: client.session!, tz: TZ, app_name: app, newTraining: 1 } });
  return Number(data.job_id);
}

/** A multipart body (fields first, then the CSV as `Servicefile`), as a browser's FormData sends it. */
export function multipartBody(fields: Fields, csv: string | Buffer, filename = 'data.csv') {
  const boundary = `----mtcsfault${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = Object.entries(fields).map(([k, v]) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="Servicefile"; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n`));
  parts.push(Buffer.isBuffer(csv) ? csv : Buffer.from(csv));
  parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}`, boundary };
}

/** POST /data with one CSV file; answers the reply. */
export async function upload(client: Client, jobId: number, csv: string | Buffer): Promise<Reply> {
  const { body, contentType } = multipartBody({ session: client.session!, job_id: jobId, file: 1 }, csv);
  const started = Date.now();
  const res = await fetch(`${client.baseUrl}${CURRENT}/data.php?tz=${TZ}`, { method: 'POST', body, headers: { 'content-type': contentType }, signal: AbortSignal.timeout(60_000) });
  return { http: res.status, envelope: (await res.json()) as Envelope, ms: Date.now() - started };
}

/** A small monthly series with a known relation; `hidden` trailing rows have an empty output to forecast. */
export function seriesCsv(rows: number, hidden = 0, seed = 1): string {
  let s = seed;
  const rand = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const lines = ['year,month,x1,x2,demand'];
  for (let i = 0; i < rows + hidden; i++) {
    const x1 = Math.round(rand() * 20);
    const x2 = Math.round(rand() * 10);
    const y = 3 * x1 + 2 * x2 + ((i % 12) + 1) * 2;
    lines.push(`${2000 + Math.floor(i / 12)},${(i % 12) + 1},${x1},${x2},${i >= rows ? '' : y}`);
  }
  return `${lines.join('\n')}\n`;
}

/** GET /jobs for one job: its legacy record (Status as a string). */
export async function jobRecord(client: Client, jobId: number): Promise<Record<string, string>> {
  const data = await client.ok('GET', 'jobs', { job_id: jobId });
  return data[0] as Record<string, string>;
}
