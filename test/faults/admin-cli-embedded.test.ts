import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, Client, ROOT, SECRET_KEY, createDatabase, killAll, startApi, type FaultDatabase } from './support.js';

/**
 * The admin CLI next to a running server. On the embedded database the server holds
 * DATA_DIR's lock and the CLI refuses (exit 1, nothing written) instead of reporting a write the server
 * never sees and a restart loses; once the server stops, or died, the CLI works. On Postgres both run
 * side by side as before.
 */

const dirs: string[] = [];
let database: FaultDatabase | undefined;
afterAll(async () => {
  await killAll();
  await database?.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** `npm run admin -- ...` as an operator runs it: its own process, the password on standard input. */
function admin(args: string[], env: Record<string, string>, stdin: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: os.tmpdir(), SECRET_KEY, LOG_LEVEL: 'warn', DATABASE_URL: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('admin CLI and a running server', () => {
  it('embedded: refuses with exit 1 while the server holds DATA_DIR, writes nothing; works after the server stops or dies', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mtcs-fault-cli-'));
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir };
    const api = await startApi({ databaseUrl: '', env });
    expect(existsSync(path.join(dataDir, 'pgdata.lock'))).toBe(true);

    const refused = await admin(['create-admin', '--email', 'cli@x.test', '--password-stdin'], env, 'Cli-Admin-Passw0rd\n');
    expect(refused.stderr).toMatch(
      new RegExp(`^The service \\(pid ${api.pid}, since [^)]+\\) holds the embedded database under ${escape(dataDir)}; stop it first, or use DATABASE_URL`),
    );
    expect(refused.stdout).toBe('');
    expect(refused.code).toBe(1);
    // Nothing was written behind the server's back: it does not know the user.
    const login = await new Client(api.baseUrl).call('POST', 'sessions', { email: 'cli@x.test', password: 'Cli-Admin-Passw0rd' });
    expect(login.envelope).toEqual({ status: 1, data: 'Invalid e-mail or password' });
    // A second server on the same DATA_DIR is refused the same way.
    await expect(startApi({ databaseUrl: '', env })).rejects.toThrow(new RegExp(`exited \\(1\\)[\\s\\S]*The service \\(pid ${api.pid}, [^)]+\\) holds the embedded database`));

    await api.stop();
    expect(existsSync(path.join(dataDir, 'pgdata.lock'))).toBe(false);
    const created = await admin(['create-admin', '--email', 'cli@x.test', '--password-stdin'], env, 'Cli-Admin-Passw0rd\n');
    expect(created.stdout).toMatch(/^Administrator cli@x\.test created \(id \d+\)$/m);
    expect(created.code).toBe(0);

    // The restarted server sees the CLI's user; killed with -9 it leaves a stale lock the CLI takes over.
    const again = await startApi({ databaseUrl: '', env });
    await new Client(again.baseUrl).login('cli@x.test', 'Cli-Admin-Passw0rd');
    await again.kill9();
    expect(existsSync(path.join(dataDir, 'pgdata.lock'))).toBe(true);
    const reset = await admin(['reset-password', '--email', 'cli@x.test', '--password-env', 'NEW_PW'], { ...env, NEW_PW: 'After-Crash-Passw0rd' }, '');
    expect(reset.stderr).toBe('');
    expect(reset.code).toBe(0);
    const third = await startApi({ databaseUrl: '', env });
    await new Client(third.baseUrl).login('cli@x.test', 'After-Crash-Passw0rd');
    await third.stop();
  });

  it('Postgres (DATABASE_URL): the CLI works while the server runs, and the server sees the write at once', async () => {
    database = await createDatabase();
    const api = await startApi({ databaseUrl: database.url });
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mtcs-fault-cli-pg-'));
    dirs.push(dataDir);
    const created = await admin(['create-admin', '--email', 'pgcli@x.test', '--password-stdin'], { DATABASE_URL: database.url, DATA_DIR: dataDir }, 'Pg-Cli-Passw0rd');
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const admin1 = new Client(api.baseUrl);
    await admin1.login('pgcli@x.test', 'Pg-Cli-Passw0rd');
    // The fixture's administrator still logs in too (nothing else was disturbed).
    await new Client(api.baseUrl).login(ADMIN_EMAIL, ADMIN_PASSWORD);
    await api.stop();
  });
});
