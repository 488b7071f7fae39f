import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config, type DatabaseBounds } from '../../src/config.js';
import { openPGlite, openPostgres, type DatabaseHandle } from '../../src/db/database.js';
import { createScryptHasher } from '../../src/domain/accounts/secrets.js';
import type { Clock } from '../../src/domain/ports.js';
import { createMailer } from '../../src/mail/mailer.js';
import { buildServices, type Services } from '../../src/services.js';
import { contractChecker } from './contract.js';
import { withDatabase } from './global-setup.js';
import { startSmtpServer } from './smtp.js';

export const CURRENT = '/api/202203010900';
export const OLDER = '/202111101200';

let databaseCounter = 0;

/** A fresh database for one test file, copied from the run's migrated template, with the service's wait bounds. */
export async function openTestDatabase(bounds?: DatabaseBounds): Promise<DatabaseHandle> {
  if (process.env.TEST_DB_KIND === 'postgres') {
    const { url, template, prefix } = inject('postgresTemplate');
    const name = `${prefix}_${process.pid}_${++databaseCounter}_${randomBytes(3).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // A backend that just disconnected from the template may linger for a moment: retry briefly.
      for (let attempt = 0; ; attempt++) {
        try {
          await admin.query(`create database ${name} template ${template}`);
          break;
        } catch (error) {
          if (attempt >= 40 || !/being accessed by other users/.test((error as Error).message)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 100));
        }
      }
    } finally {
      await admin.end();
    }
    return openPostgres(withDatabase(url, name), { max: 10, bounds });
  }
  const dump = await readFile(inject('pgliteTemplate'));
  return openPGlite({ loadDataDir: new Blob([dump]), bounds });
}

/** A clock tests can move forward (token and session expiry). */
export function testClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms) => (offset += ms) };
}

export interface TestUser {
  id: number;
  email: string;
  password: string;
  session: string;
  role: 'admin' | 'consumer';
}

export interface TestContext {
  app: FastifyInstance;
  services: Services;
  database: DatabaseHandle;
  config: Config;
  clock: ReturnType<typeof testClock>;
  mail: Awaited<ReturnType<typeof startSmtpServer>>;
  /** Every log line the app wrote, for "no secret in logs" assertions. */
  logLines: string[];
  request(options: InjectOptions): Promise<LightMyRequestResponse & { envelope: { status: number | string; data: any } }>;
  /** Creates a user directly through the services, and logs it in through HTTP. */
  createUser(options?: { role?: 'admin' | 'consumer'; email?: string; password?: string; name?: string }): Promise<TestUser>;
  login(email: string, password: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Builds the real app on a fresh database with real SMTP delivery to an in-process server. Extra
 * environment (e.g. LLM_BASE_URL of a stub) goes in `env`. `database` reuses another context's database
 * (a restarted process over the same data); close() then leaves it open for its owner.
 */
export async function createTestContext(options: { env?: Record<string, string>; database?: DatabaseHandle } = {}): Promise<TestContext> {
  const mail = await startSmtpServer();
  const dataDir = path.join(os.tmpdir(), `mtcs-test-${process.pid}-${randomBytes(4).toString('hex')}`);
  const config = loadConfig({
    DATA_DIR: dataDir,
    SMTP_URL: mail.url,
    PUBLIC_URL: 'http://front.example',
    LOG_LEVEL: 'info',
    RATE_LIMIT_LOGIN: '1000',
    WORKERS: '0',
    ...options.env,
  });
  const database = options.database ?? (await openTestDatabase(config.database));
  const clock = testClock();
  const logLines: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, cb) {
        logLines.push(String(chunk));
        cb();
      },
    }),
  );
  const services = buildServices({
    config,
    database,
    mailer: createMailer({ smtpUrl: mail.url, from: config.mailFrom, dataDir, logger }),
    clock,
    // Cheap scrypt cost keeps the suite fast; the stored format carries its cost, so verify is unchanged.
    hasher: createScryptHasher(10),
    secretKey: 'test-secret-key-0123456789abcdef0123456789',
  });
  const app = await buildApp({ config, services, logger });
  // The contract: every reply must match its operation's documented schema (see contract.ts).
  const contract = contractChecker(app);
  const contractViolations: string[] = [];
  app.addHook('onSend', async function checkReplyContract(request, reply, payload) {
    const problem = contract.check(request.method, request.routeOptions.url, reply.statusCode, payload);
    if (problem) contractViolations.push(problem);
    return payload;
  });
  const assertContract = () => {
    if (contractViolations.length > 0) throw new Error(`Contract violated: ${contractViolations.splice(0).join('\n')}`);
  };
  await app.ready();

  const ctx: TestContext = {
    app,
    services,
    database,
    config,
    clock,
    mail,
    logLines,
    async request(opts) {
      const res = await app.inject(opts);
      assertContract();
      let envelope: { status: number | string; data: any };
      try {
        envelope = res.json();
      } catch {
        throw new Error(`reply is not JSON (HTTP ${res.statusCode}): ${res.body.slice(0, 300)}`);
      }
      return Object.assign(res, { envelope });
    },
    async login(email, password) {
      const res = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, payload: { email, password } });
      if (res.envelope.status !== 0) throw new Error(`login failed: ${res.envelope.data}`);
      return res.envelope.data[0].Hash as string;
    },
    async createUser(o = {}) {
      const role = o.role ?? 'consumer';
      const email = o.email ?? `${role}-${randomBytes(4).toString('hex')}@example.com`;
      const password = o.password ?? 'Passw0rd!x';
      const id = await services.users.register({ name: o.name ?? `${role} user`, lastname: 'Tester', email, password, phone: '600000000' }, role);
      const session = await ctx.login(email, password);
      return { id, email, password, session, role };
    },
    async close() {
      await app.close();
      if (!options.database) await database.close();
      await mail.close();
      // Replies of tests that called app.inject directly are checked here.
      assertContract();
    },
  };
  return ctx;
}

/** A urlencoded body, as legacy forms send. */
export function form(fields: Record<string, string | number>) {
  return {
    payload: new URLSearchParams(Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)])).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  };
}

/** A multipart/form-data body with optional files, built by hand so tests control every byte. */
export function multipart(fields: Record<string, string | number>, files: { field: string; filename: string; content: Buffer | string; type?: string }[] = []) {
  const boundary = `----mtcs${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  for (const f of files) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${f.field}"; filename="${f.filename}"\r\nContent-Type: ${f.type ?? 'text/csv'}\r\n\r\n`,
      ),
    );
    chunks.push(Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
