/**
 * A real service process for the end-to-end benchmarks (bench/train, bench/forecast): `src/server.ts` via
 * tsx on a given database, logged in as the benchmark administrator, and a caller for its current-version
 * API that answers the envelope's `data` (and throws on status 1).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH_ADMIN = { email: 'bench@example.com', password: 'Bench-Passw0rd!' };
const API = '/api/202203010900';

export interface BenchService {
  child: ChildProcess;
  port: number;
  session: string;
  tz: string;
}

export async function startService(
  databaseUrl: string,
  options: { workers: number; tz: string; nice?: number },
): Promise<BenchService> {
  const port = 19000 + Math.floor(Math.random() * 2000);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      WORKERS: String(options.workers),
      ...(options.nice === undefined ? {} : { TRAINING_NICE: String(options.nice) }),
      LOG_LEVEL: 'warn',
      ADMIN_EMAIL: BENCH_ADMIN.email,
      ADMIN_PASSWORD: BENCH_ADMIN.password,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (String(chunk).includes('Listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  const service: BenchService = { child, port, session: '', tz: options.tz };
  const login = await call<{ Hash: string }[]>(service, 'POST', '/sessions.php', { email: BENCH_ADMIN.email, password: BENCH_ADMIN.password });
  service.session = login[0]!.Hash;
  return service;
}

export async function stopService(service: BenchService): Promise<void> {
  if (service.child.exitCode !== null) return;
  const exited = new Promise((r) => service.child.once('exit', r));
  service.child.kill('SIGTERM');
  await exited;
}

export async function call<T>(service: BenchService, method: string, path: string, params: Record<string, string | number>, body?: FormData): Promise<T> {
  const all = new URLSearchParams({ tz: service.tz, ...(service.session ? { session: service.session } : {}) });
  for (const [k, v] of Object.entries(params)) all.set(k, String(v));
  const url = `http://127.0.0.1:${service.port}${API}${path}`;
  const res = method === 'GET' ? await fetch(`${url}?${all.toString()}`) : await fetch(url, { method, body: body ?? all });
  const reply = (await res.json()) as { status: number; data: unknown };
  if (reply.status !== 0) throw new Error(`${method} ${path}: ${JSON.stringify(reply.data)}`);
  return reply.data as T;
}
