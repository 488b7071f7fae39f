import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions, LogFn, Logger, LoggerOptions } from 'pino';

/** Query and body parameters whose values never reach a log line. */
const SECRET_PARAMS = /^(session|password|current_password|new_password|new_password_repeat|token|provider_key|hash)$/i;

/** A query key as the parameter reader sees it (percent-decoded, `+` a space); undecodable keys stay as sent. */
function queryKey(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}

/**
 * The URL with the value of every secret parameter replaced, the rest as sent. Pair by pair rather than
 * through URLSearchParams, which decodes and re-encodes the whole query on every request (a share of the
 * session check's CPU: docs/benchmarks.md, sessions).
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const pairs = url.slice(q + 1).split('&');
  let redacted = false;
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i] as string;
    const eq = pair.indexOf('=');
    const raw = eq < 0 ? pair : pair.slice(0, eq);
    if (SECRET_PARAMS.test(queryKey(raw))) {
      pairs[i] = `${raw}=%5Bredacted%5D`;
      redacted = true;
    }
  }
  return redacted ? `${url.slice(0, q)}?${pairs.join('&')}` : url;
}

/** Request headers that never reach a log line. */
const SECRET_HEADERS = /^(authorization|cookie)$/i;

const censorHeaders = (headers: unknown) =>
  headers && typeof headers === 'object'
    ? Object.fromEntries(Object.entries(headers as Record<string, unknown>).map(([name, value]) => [name, SECRET_HEADERS.test(name) ? '[redacted]' : value]))
    : headers;

/**
 * Redaction by serializers, not pino's `redact` paths: a path redactor ran on the `req` and `res` of every
 * request's line (2 us of the session check's CPU: docs/benchmarks.md, sessions) though neither serialized
 * form carries headers. The one object logged with request headers is @fastify/multipart's busboy options
 * (LOG_LEVEL=trace).
 */
const serializers = {
  req(request: { method: string; url: string; ip?: string; id?: string }) {
    // A URL may be 16 KB (the header limit): a log line keeps its first 1,000 characters.
    const url = redactUrl(request.url);
    return { method: request.method, url: url.length > 1000 ? `${url.slice(0, 1000)}…` : url, ip: request.ip, reqId: request.id };
  },
  busboyOptions(options: unknown) {
    if (!options || typeof options !== 'object') return options;
    const { headers } = options as { headers?: unknown };
    return headers === undefined ? options : { ...options, headers: censorHeaders(headers) };
  },
};

/** pino options: request lines without secrets (query values, cookies, Authorization). */
export function loggerOptions(level: string): LoggerOptions {
  return { level, serializers };
}

/** Any logger handed to the app gets the same redaction, whoever built it. */
export function redactingChild(logger: Logger): FastifyBaseLogger {
  return logger.child({}, { serializers });
}

/**
 * Fastify's request.log, made into a pino child only when something logs through it. Most requests log
 * nothing but their completion line, which RequestLogLines writes through the parent with the request id
 * (the same line). A pino child a request (Fastify passes options, so pino rebuilds its formatters too) was
 * a share of the session check's CPU (docs/benchmarks.md, sessions).
 */
export class RequestLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.#child ??= Object.keys(this.options).length === 0 ? this.parent.child(this.bindings) : this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  fatal(...args: Parameters<LogFn>): void {
    this.real.fatal(...args);
  }
  error(...args: Parameters<LogFn>): void {
    this.real.error(...args);
  }
  warn(...args: Parameters<LogFn>): void {
    this.real.warn(...args);
  }
  info(...args: Parameters<LogFn>): void {
    this.real.info(...args);
  }
  debug(...args: Parameters<LogFn>): void {
    this.real.debug(...args);
  }
  trace(...args: Parameters<LogFn>): void {
    this.real.trace(...args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }

  /** A line of this request at `level`: through the parent with the bindings while no child is needed. */
  line(level: 'info' | 'error', fields: Record<string, unknown>, message: string): void {
    if (this.#child || Object.keys(this.options).length > 0) this.real[level](fields, message);
    else this.parent[level]({ ...this.bindings, ...fields }, message);
  }
}

export const requestLoggerFactory = (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger =>
  new RequestLogger(logger, bindings, options);

const requestLine = (log: FastifyBaseLogger, level: 'info' | 'error', fields: Record<string, unknown>, message: string) =>
  log instanceof RequestLogger ? log.line(level, fields, message) : log[level](fields, message);

/**
 * One log line per request, written when it completes, with the request and the outcome together (nginx's
 * access log), instead of Fastify's two ("incoming request", "request completed"): each line cost the session
 * check ~5% of its CPU in serialising and writing (docs/benchmarks.md, sessions). The arrival line is still
 * there at LOG_LEVEL=debug, for a request that never completes.
 */
export class RequestLogLines extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) requestLine(reply.log, 'error', { req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else requestLine(reply.log, 'info', { req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
