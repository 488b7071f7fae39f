import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BENCH_ADMIN = { email: 'bench@example.com', password: 'Bench-Passw0rd!' };

/** The service from its sources on loopback, API-only, resolved once it listens; `env` overrides the defaults; `cwd` may be another checkout (a before/after run). */
export async function startServer(env: Record<string, string>, port: number, cwd = root): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', WORKERS: '0', MAX_UPLOAD_MB: '2000', ADMIN_EMAIL: BENCH_ADMIN.email, ADMIN_PASSWORD: BENCH_ADMIN.password, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (String(chunk).includes('Listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return child;
}
