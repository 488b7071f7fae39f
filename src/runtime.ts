import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { ConfigError, type Config } from './config.js';
import type { Metrics } from './observability/metrics.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { migrate, migrationsCurrent } from './db/migrator.js';
import { createScryptHasher } from './domain/accounts/secrets.js';
import { JOB_STATUS } from './domain/jobs/job-status.js';
import { systemClock } from './domain/ports.js';
import { createMailer } from './mail/mailer.js';
import { buildServices, type Services } from './services.js';

export interface Runtime {
  config: Config;
  logger: Logger;
  database: DatabaseHandle;
  services: Services;
  secretKey: string;
  readiness(): Promise<{ ready: boolean; reason?: string }>;
  close(): Promise<void>;
}

/** SECRET_KEY from the environment, or one generated once into DATA_DIR/secret.key and reused. */
export async function resolveSecretKey(config: Config): Promise<string> {
  if (config.secretKey) return config.secretKey;
  const file = path.resolve(config.dataDir, 'secret.key');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    await mkdir(path.dirname(file), { recursive: true });
    const key = randomBytes(32).toString('base64url');
    await writeFile(file, key, { mode: 0o600 });
    return key;
  }
}

/**
 * Opens what a process of this service needs (database, migrations, mail, services) the same way for
 * the API server, the worker and the admin CLI.
 */
export async function startRuntime(
  config: Config,
  logger = pino({ level: config.logLevel }),
  metrics?: Metrics,
  options: { checkSecrets?: boolean; database?: Promise<DatabaseHandle> } = {},
): Promise<Runtime> {
  // `database`: already being opened by the caller (server.ts starts it before loading the rest).
  const database = await (options.database ?? openDatabase(config));
  let services: Services;
  let secretKey: string;
  try {
    const applied = await migrate(database);
    secretKey = await resolveSecretKey(config);
    const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir, logger });
    services = buildServices({ config, database, mailer, clock: systemClock, hasher: createScryptHasher(), secretKey, metrics });
    if (applied.length > 0) {
      logger.info({ applied }, 'migrations applied');
      await services.events.record({ type: 2, procedure: 'migrations', text: `Applied migrations: ${applied.join(', ')}` });
    }
    if (options.checkSecrets ?? true) await checkSecrets(services, logger);
  } catch (error) {
    // A failed start lets go of the database (and the embedded one's lock) at once.
    await database.close().catch(() => undefined);
    throw error;
  }
  return {
    config,
    logger,
    database,
    services,
    secretKey,
    async readiness() {
      const current = await migrationsCurrent(database);
      return current ? { ready: true } : { ready: false, reason: 'migrations pending' };
    },
    close: () => database.close(),
  };
}

/**
 * A process must not start with keys that cannot read what is stored: every request needing a provider
 * key would fail later, one by one. Legacy secrets (sealed without row binding) are re-sealed here.
 */
async function checkSecrets(services: Services, logger: Logger): Promise<void> {
  const { failures, resealed } = await services.clients.checkStoredSecrets('legacy');
  if (resealed > 0) logger.info({ resealed }, 'legacy provider keys re-sealed with row binding');
  if (failures.length > 0) {
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more)` : '';
    throw new ConfigError(`Cannot start: SECRET_KEY cannot decrypt the stored provider keys: ${failures[0]}${more}; set SECRET_KEY (and SECRET_KEY_PREVIOUS while rotating) to the keys they were sealed with`);
  }
}

/** The administrator an empty database gets when ADMIN_EMAIL is not set. */
export const DEFAULT_ADMIN_EMAIL = 'admin@localhost';

/**
 * ADMIN_PASSWORD creates or updates the administrator ADMIN_EMAIL, or admin@localhost when only the password
 * is set (it used to be ignored and a random one printed, so the password an operator set did not sign in);
 * an empty database gets an administrator anyway.
 */
export async function ensureAdministrator(runtime: Pick<Runtime, 'config' | 'services' | 'logger'>): Promise<void> {
  const { config, services, logger } = runtime;
  const email = config.adminEmail ?? DEFAULT_ADMIN_EMAIL;
  if (config.adminPassword) {
    const { created } = await services.users.ensureAdmin(email, config.adminPassword);
    logger.info({ email }, created ? 'administrator created' : 'administrator updated');
    return;
  }
  if ((await services.users.countAdmins()) > 0) return;
  const password = `${randomBytes(12).toString('base64url')}-A1`;
  await services.users.ensureAdmin(email, password);
  // Printed once, on the terminal only (not through the logger, whose lines may be shipped elsewhere).
  process.stdout.write(`\nCreated administrator ${email} with password: ${password}\nChange it with PUT /passwords.\n\n`);
}

/** Gauges that need the database, refreshed when /metrics is scraped. */
export async function refreshJobGauges(runtime: Runtime, metrics: Metrics): Promise<void> {
  const rows = await runtime.services.jobs.countByStatus();
  metrics.jobsByStatus.reset();
  for (const row of rows) metrics.jobsByStatus.set({ status: String(row.status) }, row.n);
  const pending = rows.find((r) => r.status === JOB_STATUS.Pending);
  metrics.queueDepth.set(pending?.n ?? 0);
  metrics.queueAge.set(pending?.oldest ? Math.max(0, (Date.now() - new Date(pending.oldest).getTime()) / 1000) : 0);
  const parts = await runtime.services.jobs.countParts();
  ['queued', 'running', 'done'].forEach((state, status) => metrics.jobParts.set({ state }, parts.find((p) => p.status === status)?.n ?? 0));
}
