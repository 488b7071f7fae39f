import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand, USAGE } from '../../src/cli/admin.js';
import { DatabaseLockedError, lockEmbeddedDatabase } from '../../src/db/embedded-lock.js';
import { loadConfig } from '../../src/config.js';
import { startRuntime } from '../../src/runtime.js';
import pino from 'pino';

let dataDir: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'mtcs-admin-cli-'));
  env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function run(...argv: string[]) {
  return runWith({}, ...argv);
}

async function runWith(options: { stdin?: string; env?: NodeJS.ProcessEnv }, ...argv: string[]) {
  let out = '';
  let err = '';
  const stdin = Readable.from(options.stdin === undefined ? [] : [options.stdin]);
  const code = await runAdminCommand(argv, { out: (t) => void (out += t), err: (t) => void (err += t), stdin }, { ...env, ...options.env });
  return { code, out, err };
}

/** The same services the CLI uses, opened on its database, for checking what a command did. */
async function withRuntime<T>(use: (rt: Awaited<ReturnType<typeof startRuntime>>) => Promise<T>): Promise<T> {
  const runtime = await startRuntime(loadConfig(env), pino({ level: 'silent' }));
  try {
    return await use(runtime);
  } finally {
    await runtime.close();
  }
}

describe('admin CLI', () => {
  it('creates an administrator through `npx tsx src/cli/admin.ts` with exit code 0', () => {
    const result = spawnSync('npx', ['tsx', 'src/cli/admin.ts', 'create-admin', '--email', 'ops@example.com', '--password', 'Str0ng-pass'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.stderr).not.toMatch(/Failed|Error/);
    expect(result.stdout).toMatch(/^Administrator ops@example\.com created \(id \d+\)$/m);
    expect(result.status).toBe(0);
  });

  it('answers usage errors with exit code 2 and the usage text, without opening the database', async () => {
    expect(await run('--help')).toEqual({ code: 0, out: USAGE, err: '' });
    for (const [argv, reason] of [
      [[], 'No command given'],
      [['frobnicate'], "Unknown command 'frobnicate'"],
      [['create-admin', '--email', 'x@example.com'], 'Missing --password-stdin, --password-env <NAME> or --password'],
      [['create-admin', '--email', 'x@example.com', '--password', 'Str0ng-pass', '--password-stdin'], 'Give one of --password-stdin, --password-env and --password, not --password and --password-stdin'],
      [['list-users', 'extra'], "Unexpected argument 'extra'"],
      [['invoice', '--until', '2024-13-01'], "--until '2024-13-01' is not a date as YYYY-MM-DD"],
      [['invoice', '--until', '2024-01-31', '--tz', 'Mars/Base'], "--tz 'Mars/Base' is not a known time zone"],
      [['list-users', '--bogus'], "Unknown option '--bogus'"],
    ] as const) {
      const result = await run(...argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.err).toContain(reason);
      expect(result.err).toContain('Usage: npm run admin');
    }
    const weak = await run('create-admin', '--email', 'x@example.com', '--password', 'short');
    expect(weak).toEqual({ code: 1, out: '', err: "Invalid parameter 'password': must be at least 8 characters long\n" });
  });

  it('lists users, resets a password, and fails with exit code 1 for an unknown user', async () => {
    const listed = await run('list-users');
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(/^id\temail\trole\tenabled\tname$/m);
    expect(listed.out).toMatch(/^\d+\tops@example\.com\tadmin\tenabled\tAdministrator$/m);

    expect(await run('reset-password', '--email', 'OPS@example.com', '--password', 'N3w-password')).toEqual({
      code: 0,
      out: "Password of ops@example.com changed; all of that user's sessions ended\n",
      err: '',
    });
    await withRuntime(async ({ services }) => {
      await expect(services.sessions.login('ops@example.com', 'N3w-password')).resolves.toMatchObject({ user: { role: 'admin' } });
      await expect(services.sessions.login('ops@example.com', 'Str0ng-pass')).rejects.toThrow('Invalid e-mail or password');
    });
    expect(await run('reset-password', '--email', 'nobody@example.com', '--password', 'N3w-password')).toEqual({
      code: 1,
      out: '',
      err: 'No user with e-mail nobody@example.com\n',
    });
  });

  it('marks consumptions invoiced up to the end of the given day and logs it', async () => {
    await withRuntime(async ({ services }) => {
      const user = await services.users.findByEmail('ops@example.com');
      const base = { userId: user!.id, appName: 'forecast', host: 'h', pid: 1, ramMb: 1, cpuSeconds: 1, diskMb: 1 };
      await services.consumptions.record({ ...base, date: new Date('2024-01-31T23:59:00Z') });
      await services.consumptions.record({ ...base, date: new Date('2024-02-01T00:00:00Z') });
      // The one ledger: language-model replies are invoiced with the training runs.
      const reply = { userId: user!.id, clientId: 1, model: 'gpt-4o-mini', promptTokens: 10, completionTokens: 5 };
      await services.consumptions.recordReply({ ...reply, kind: 'chat', usecaseId: 1, chatId: 1, date: new Date('2024-01-10T00:00:00Z') });
      await services.consumptions.recordReply({ ...reply, kind: 'aichat', date: new Date('2024-01-20T00:00:00Z') });
      await services.consumptions.recordReply({ ...reply, kind: 'aichat', date: new Date('2024-02-02T00:00:00Z') });
    });
    const result = await run('invoice', '--until', '2024-01-31');
    expect(result).toEqual({ code: 0, out: 'Marked 3 consumption records dated up to 2024-01-31 (UTC) as invoiced\n', err: '' });
    await withRuntime(async ({ database }) => {
      const rows = await database.db.selectFrom('consumptions').select(['kind', 'date', 'date_invoiced']).orderBy('date').execute();
      expect(rows.map((r) => [r.kind, r.date_invoiced !== null])).toEqual([
        ['chat', true],
        ['aichat', true],
        ['training', true],
        ['training', false],
        ['aichat', false],
      ]);
      const logged = await database.db.selectFrom('logs').select(['procedure', 'text']).where('procedure', 'like', 'admin-cli.%').orderBy('id').execute();
      expect(logged.map((l) => l.procedure)).toEqual(['admin-cli.create-admin', 'admin-cli.reset-password', 'admin-cli.invoice']);
      expect(JSON.stringify(logged)).not.toMatch(/Str0ng-pass|N3w-password/);
    });
  });
});

describe('admin CLI passwords and sessions', () => {
  it('reads the password from standard input (one trailing newline dropped) and from a named environment variable', async () => {
    expect(await runWith({ stdin: 'From-stdin-Passw0rd\n' }, 'reset-password', '--email', 'ops@example.com', '--password-stdin')).toMatchObject({ code: 0, err: '' });
    await withRuntime(async ({ services }) => {
      await expect(services.sessions.login('ops@example.com', 'From-stdin-Passw0rd')).resolves.toMatchObject({ user: { role: 'admin' } });
    });
    const fromEnv = await runWith({ env: { OPS_NEW_PASSWORD: 'From-env-Passw0rd' } }, 'create-admin', '--email', 'envops@example.com', '--password-env', 'OPS_NEW_PASSWORD');
    expect(fromEnv).toMatchObject({ code: 0, out: expect.stringMatching(/^Administrator envops@example\.com created/) });
    await withRuntime(async ({ services }) => {
      await expect(services.sessions.login('envops@example.com', 'From-env-Passw0rd')).resolves.toMatchObject({ user: { role: 'admin' } });
    });
    expect(await runWith({}, 'reset-password', '--email', 'ops@example.com', '--password-env', 'NOT_SET_ANYWHERE')).toEqual({
      code: 1,
      out: '',
      err: 'The environment variable NOT_SET_ANYWHERE (--password-env) is not set or empty\n',
    });
    expect(await runWith({ stdin: '\n' }, 'reset-password', '--email', 'ops@example.com', '--password-stdin')).toEqual({
      code: 1,
      out: '',
      err: 'Standard input held no password (--password-stdin)\n',
    });
    // Weak passwords are refused whichever way they come.
    expect((await runWith({ stdin: 'short' }, 'reset-password', '--email', 'ops@example.com', '--password-stdin')).code).toBe(1);
  });

  it('reset-password and create-admin over an existing user end all of that user\'s sessions', async () => {
    const tokens = await withRuntime(async ({ services }) => [
      (await services.sessions.login('ops@example.com', 'From-stdin-Passw0rd', { ip: '192.0.2.1' })).token,
      (await services.sessions.login('ops@example.com', 'From-stdin-Passw0rd', { ip: '192.0.2.2' })).token,
    ]);
    expect(await runWith({ stdin: 'Reset-again-Passw0rd' }, 'reset-password', '--email', 'ops@example.com', '--password-stdin')).toMatchObject({ code: 0 });
    await withRuntime(async ({ services }) => {
      for (const token of tokens) await expect(services.sessions.authenticate(token)).rejects.toThrow();
      const token = (await services.sessions.login('ops@example.com', 'Reset-again-Passw0rd')).token;
      await expect(services.sessions.authenticate(token)).resolves.toMatchObject({ email: 'ops@example.com' });
      tokens.splice(0, 2, token);
    });
    expect(await runWith({ env: { P: 'Admin-again-Passw0rd' } }, 'create-admin', '--email', 'ops@example.com', '--password-env', 'P')).toMatchObject({ code: 0 });
    await withRuntime(async ({ services }) => {
      await expect(services.sessions.authenticate(tokens[0])).rejects.toThrow();
    });
  });

  it('refuses with exit code 1 while another opener holds the embedded database, and writes nothing', async () => {
    const runtime = await startRuntime(loadConfig(env), pino({ level: 'silent' }));
    try {
      const result = await runWith({ env: { HELD_PW: 'Held-Passw0rd-1' } }, 'create-admin', '--email', 'held@example.com', '--password-env', 'HELD_PW');
      expect(result.code).toBe(1);
      expect(result.out).toBe('');
      expect(result.err).toMatch(new RegExp(`\\(pid ${process.pid}, since [^)]+\\) holds the embedded database under ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; stop it first, or use DATABASE_URL`));
    } finally {
      await runtime.close();
    }
    await withRuntime(async ({ services }) => {
      expect(await services.users.findByEmail('held@example.com')).toBeUndefined();
    });
  });
});

describe('the embedded database lock', () => {
  const ticksOf = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
  };
  const holder = (over: Record<string, unknown>) =>
    JSON.stringify({ pid: process.ppid, host: os.hostname(), startTicks: ticksOf(process.ppid), startedAt: '2026-01-01T00:00:00.000Z', process: 'the service', ...over });

  it('refuses while its holder lives, takes over a lock whose pid is gone, reused, unreadable or foreign and untouched', async () => {
    const pgdata = path.join(await mkdtemp(path.join(os.tmpdir(), 'mtcs-lock-')), 'pgdata');
    const lockFile = `${pgdata}.lock`;
    try {
      writeFileSync(lockFile, holder({}));
      await expect(lockEmbeddedDatabase(pgdata)).rejects.toThrow(`The service (pid ${process.ppid}, since 2026-01-01T00:00:00.000Z) holds the embedded database under ${path.dirname(pgdata)}; stop it first, or use DATABASE_URL`);
      writeFileSync(lockFile, holder({ host: 'other-host' }));
      await expect(lockEmbeddedDatabase(pgdata)).rejects.toThrow(/on host other-host/);

      const stale = [
        holder({ pid: 2 ** 22 + 12345 }), // no such process
        holder({ startTicks: '1' }), // the pid now belongs to another process
        'not json',
        holder({ host: 'other-host' }), // untouched for longer than its holder would leave it
      ];
      for (const [i, content] of stale.entries()) {
        writeFileSync(lockFile, content);
        if (i === 3) utimesSync(lockFile, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
        const release = await lockEmbeddedDatabase(pgdata);
        expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, host: os.hostname() });
        await expect(lockEmbeddedDatabase(pgdata)).rejects.toThrow(DatabaseLockedError);
        await release();
        expect(existsSync(lockFile)).toBe(false);
      }
    } finally {
      await rm(path.dirname(pgdata), { recursive: true, force: true });
    }
  });
});
