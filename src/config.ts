import path from 'node:path';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * The one place that reads process.env. Every setting is validated at start; a bad value stops the
 * start with a one-line reason naming the variable.
 */
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** What Fastify's trustProxy takes, minus `true` (believing every client is what TRUST_PROXY exists to stop). */
export type TrustProxy = false | number | string[];

const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

function parseTrustProxy(value: string | undefined, ctx: z.RefinementCtx): TrustProxy {
  if (value === undefined || /^(false|off|no|0)$/i.test(value)) return false;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  const bad = /^(true|on|yes)$/i.test(value) ? value : entries.find((entry) => !isProxyAddress(entry));
  if (bad !== undefined) {
    ctx.addIssue({ code: 'custom', message: `'${bad.slice(0, 64)}' is not a hop count, address, CIDR or loopback/linklocal/uniquelocal (trusting every client is not offered)` });
    return z.NEVER;
  }
  return entries;
}

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  /** Connection limits, nginx's defaults (a phone on a bad network passes them): the headers must arrive within this. */
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  /** Longest pause between two reads of a request body; the request then fails and its connection is closed. */
  BODY_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  /** An idle keep-alive connection is closed after this. */
  KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).default(75_000),
  /**
   * A reply sent before its request's body was read (a refused upload) is followed by reading and dropping
   * the rest of the body for at most this long (nginx's lingering_time), so a client that sends everything
   * before it reads still gets the reply.
   */
  LINGERING_TIME_MS: z.coerce.number().int().min(0).default(30_000),
  /** ... and at most this much of it; unset: MAX_UPLOAD_MB + 1, the largest upload body taken. */
  LINGERING_MAX_MB: optionalString.pipe(z.coerce.number<string | undefined>().positive().optional()),
  /** On SIGTERM/SIGINT, what is in flight gets this long; then connections are cut and the process exits. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /** Proxies whose X-Forwarded-For is believed: unset (none), a hop count, or a comma list of addresses/CIDRs. */
  TRUST_PROXY: optionalString.transform(parseTrustProxy),
  /** Port of the worker process's /healthz and /readyz; unset: the worker serves no HTTP. */
  WORKER_HEALTH_PORT: optionalString.pipe(z.string().regex(/^\d+$/, 'must be a port number').transform(Number).pipe(z.number().int().min(1).max(65535)).optional()),
  DATABASE_URL: optionalString.pipe(z.string().url().optional()),
  /**
   * Bounds of every database wait (docs/interface-notes.md, Bounded database waits). A request's statement:
   * above the slowest operation's own work, under a front end's 60 s proxy timeout with room for a retry.
   */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  /** A wait for a row or table lock: other requests' locks last a statement; one held longer is a migration or an operator. */
  DB_LOCK_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  /** A transaction left open with nothing running: no transaction waits on a client, so only a fault leaves one. */
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** The wait for a database connection: a free one of the pool (or a new one), the embedded database's only one. */
  DB_CONNECTION_WAIT_MS: z.coerce.number().int().min(100).default(10_000),
  /** A statement of bulk work: an upload's COPY and its swap, the training-set export, a migration. */
  DB_LONG_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(600_000),
  DATA_DIR: z.string().min(1).default('./data'),
  ADMIN_EMAIL: optionalString.pipe(z.string().email().optional()),
  ADMIN_PASSWORD: optionalString,
  SMTP_URL: optionalString.pipe(z.string().url().optional()),
  MAIL_FROM: z.string().min(3).default('Model Training Service <no-reply@localhost>'),
  PUBLIC_URL: z.string().url().default('http://localhost:8080'),
  SECRET_KEY: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  /** The key before a rotation: still accepted for reading until `npm run admin -- rotate-secrets` ran. */
  SECRET_KEY_PREVIOUS: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  /** Sliding session lifetime, in seconds. */
  SESSION_TTL: z.coerce.number().int().min(60).default(60 * 60 * 24 * 7),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Comma list of allowed browser origins; empty means any origin, without credentials. */
  CORS_ORIGINS: optionalString,
  LLM_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  MAX_UPLOAD_MB: z.coerce.number().positive().default(200),
  /** Disk an uploading user may hold in the upload spool (DATA_DIR/spool) at once, over all their uploads. */
  UPLOAD_SPOOL_USER_MB: z.coerce.number().positive().default(400),
  /** Disk all uploads in progress may hold in the spool together. */
  UPLOAD_SPOOL_TOTAL_MB: z.coerce.number().positive().default(2048),
  /** What a file sent before any session is known may spool, per request and over all such requests. */
  UPLOAD_ANONYMOUS_KB: z.coerce.number().min(0).default(1024),
  UPLOAD_ANONYMOUS_TOTAL_MB: z.coerce.number().min(0).default(32),
  /** Bounds of one CSV record: a cell, a whole record (or physical line), the columns. */
  CSV_MAX_CELL_KB: z.coerce.number().positive().default(64),
  CSV_MAX_RECORD_KB: z.coerce.number().positive().default(1024),
  CSV_MAX_COLUMNS: z.coerce.number().int().min(1).max(1599).default(1000),
  /** Training threads this process runs; 0 makes an API-only process. */
  WORKERS: z.coerce.number().int().min(0).max(64).default(1),
  /**
   * Nice increment of the training threads: when CPUs are short the scheduler serves the API and
   * Postgres first (GET /jobs.php p99 while two jobs train stays near idle; docs/benchmarks.md).
   */
  TRAINING_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /** A running job whose worker has not beaten for this long is re-queued once, then failed. */
  JOB_STALE_AFTER_MS: z.coerce.number().int().min(1000).default(30_000),
  /** How often each training process looks for such orphaned jobs. */
  JOB_RECOVER_EVERY_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * One training's memory budget in MB: a job estimated above it is refused with the reason, and it is the
   * heap limit of each training thread (a thread reaching it fails its job, the process keeps serving).
   */
  TRAINING_MEMORY_MB: z.coerce.number().int().min(64).default(512),
  /**
   * Known rows a model sees at most (the most recent rows of a series, a seeded sample of tabular data);
   * fewer when that many rows of the upload's width would not fit TRAINING_MEMORY_MB.
   */
  TRAINING_MAX_ROWS: z.coerce.number().int().min(100).default(100_000),
  /**
   * Work units of one part of a panel job (docs/benchmarks.md, parts; a naive fit is 1): a panel of more is
   * spread over the training threads of every process. The default is about two seconds of one thread.
   */
  TRAINING_PART_UNITS: z.coerce.number().int().min(1).default(5_000),
  /** Login / recovery attempts allowed per IP per minute. */
  RATE_LIMIT_LOGIN: z.coerce.number().int().min(1).default(20),
  /** Failed logins for one e-mail from one client address, within LOGIN_FAILURE_WINDOW, before that pair is refused. */
  LOGIN_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(10),
  /** Seconds a failed login counts (pair limit and e-mail-wide slow-down). */
  LOGIN_FAILURE_WINDOW: z.coerce.number().int().min(1).default(15 * 60),
  /** Longest delay the e-mail-wide slow-down puts before a login's password check (every address, right password too). */
  LOGIN_SLOWDOWN_MAX_MS: z.coerce.number().int().min(0).default(5000),
  /** Password hashes (scrypt, ~128 MB and ~1 s each) computed at once by this process. */
  PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(Math.min(4, Math.max(2, availableParallelism()))),
  /** Password hashes allowed to wait for a slot; past it a login is refused with rate_limited. */
  PASSWORD_HASH_QUEUE: z.coerce.number().int().min(0).default(8),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  port: number;
  host: string;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  keepAliveTimeoutMs: number;
  lingeringTimeMs: number;
  lingeringMaxBytes: number;
  shutdownGraceMs: number;
  trustProxy: TrustProxy;
  workerHealthPort: number | undefined;
  databaseUrl: string | undefined;
  database: DatabaseBounds;
  dataDir: string;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  publicUrl: string;
  secretKey: string | undefined;
  previousSecretKey: string | undefined;
  sessionTtlSeconds: number;
  logLevel: Env['LOG_LEVEL'];
  corsOrigins: string[] | undefined;
  llmBaseUrl: string;
  llmModel: string;
  llmTimeoutMs: number;
  maxUploadBytes: number;
  uploads: UploadLimits;
  workers: number;
  trainingNice: number;
  jobStaleAfterMs: number;
  jobRecoverEveryMs: number;
  trainingMemoryMb: number;
  trainingMaxRows: number;
  trainingPartUnits: number;
  rateLimitLogin: number;
  loginFailuresPerAddress: number;
  loginFailureWindowMs: number;
  loginSlowdownMaxMs: number;
  passwordHashConcurrency: number;
  passwordHashQueue: number;
}

/** How long the database may keep anyone waiting (src/db/database.ts), in milliseconds. */
export interface DatabaseBounds {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
  connectionWaitMs: number;
  longStatementTimeoutMs: number;
}

/** The upload spool and CSV record bounds (src/domain/data/upload-spool.ts, csv-ingest.ts). */
export interface UploadLimits {
  spoolDir: string;
  userSpoolBytes: number;
  totalSpoolBytes: number;
  anonymousBytes: number;
  anonymousTotalBytes: number;
  maxCellBytes: number;
  maxRecordBytes: number;
  maxColumns: number;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = issue?.path.join('.') ?? 'environment';
    throw new ConfigError(`Invalid configuration: ${name}: ${issue?.message ?? 'invalid value'}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: e.BODY_TIMEOUT_MS,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    lingeringTimeMs: e.LINGERING_TIME_MS,
    lingeringMaxBytes: Math.round((e.LINGERING_MAX_MB ?? e.MAX_UPLOAD_MB + 1) * 1024 * 1024),
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    trustProxy: e.TRUST_PROXY,
    workerHealthPort: e.WORKER_HEALTH_PORT,
    databaseUrl: e.DATABASE_URL,
    database: {
      statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: e.DB_LOCK_TIMEOUT_MS,
      idleInTransactionTimeoutMs: e.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      connectionWaitMs: e.DB_CONNECTION_WAIT_MS,
      longStatementTimeoutMs: e.DB_LONG_STATEMENT_TIMEOUT_MS,
    },
    dataDir: e.DATA_DIR,
    adminEmail: e.ADMIN_EMAIL,
    adminPassword: e.ADMIN_PASSWORD,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    publicUrl: e.PUBLIC_URL.replace(/\/+$/, ''),
    secretKey: e.SECRET_KEY,
    previousSecretKey: e.SECRET_KEY_PREVIOUS,
    sessionTtlSeconds: e.SESSION_TTL,
    logLevel: e.LOG_LEVEL,
    corsOrigins: e.CORS_ORIGINS?.split(',').map((o) => o.trim()).filter(Boolean),
    llmBaseUrl: e.LLM_BASE_URL,
    llmModel: e.LLM_MODEL,
    llmTimeoutMs: e.LLM_TIMEOUT_MS,
    maxUploadBytes: Math.round(e.MAX_UPLOAD_MB * 1024 * 1024),
    uploads: {
      spoolDir: path.join(e.DATA_DIR, 'spool'),
      userSpoolBytes: Math.round(e.UPLOAD_SPOOL_USER_MB * 1024 * 1024),
      totalSpoolBytes: Math.round(e.UPLOAD_SPOOL_TOTAL_MB * 1024 * 1024),
      anonymousBytes: Math.round(e.UPLOAD_ANONYMOUS_KB * 1024),
      anonymousTotalBytes: Math.round(e.UPLOAD_ANONYMOUS_TOTAL_MB * 1024 * 1024),
      maxCellBytes: Math.round(e.CSV_MAX_CELL_KB * 1024),
      maxRecordBytes: Math.round(e.CSV_MAX_RECORD_KB * 1024),
      maxColumns: e.CSV_MAX_COLUMNS,
    },
    workers: e.WORKERS,
    trainingNice: e.TRAINING_NICE,
    jobStaleAfterMs: e.JOB_STALE_AFTER_MS,
    jobRecoverEveryMs: e.JOB_RECOVER_EVERY_MS,
    trainingMemoryMb: e.TRAINING_MEMORY_MB,
    trainingMaxRows: e.TRAINING_MAX_ROWS,
    trainingPartUnits: e.TRAINING_PART_UNITS,
    rateLimitLogin: e.RATE_LIMIT_LOGIN,
    loginFailuresPerAddress: e.LOGIN_FAILURES_PER_ADDRESS,
    loginFailureWindowMs: e.LOGIN_FAILURE_WINDOW * 1000,
    loginSlowdownMaxMs: e.LOGIN_SLOWDOWN_MAX_MS,
    passwordHashConcurrency: e.PASSWORD_HASH_CONCURRENCY,
    passwordHashQueue: e.PASSWORD_HASH_QUEUE,
  };
}
