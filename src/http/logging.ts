import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger, LoggerOptions } from 'pino';

/** Query and body parameters whose values never reach a log line. */
const SECRET_PARAMS = /^(session|password|current_password|new_password|new_password_repeat|token|provider_key|hash)$/i;

function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const key of [...params.keys()]) if (SECRET_PARAMS.test(key)) params.set(key, '[redacted]');
  return `${url.slice(0, q)}?${params.toString()}`;
}

/** Request headers that never reach a log line. */
const SECRET_HEADERS = /^(authorization|cookie)$/i;

const censorHeaders = (headers: unknown) =>
  headers && typeof headers === 'object'
    ? Object.fromEntries(Object.entries(headers as Record<string, unknown>).map(([name, value]) => [name, SECRET_HEADERS.test(name) ? '[redacted]' : value]))
    : headers;

/**
 * Redaction by serializers, not pino's `redact` paths: a path redactor ran on the `req` and `res` of
 * every request's line (2 us of the session check's CPU, issue 35) though neither serialized form
 * carries headers. The one object logged with request headers is @fastify/multipart's busboy options
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
 * One log line per request, written when it completes, with the request and the outcome together
 * (nginx's access log), instead of Fastify's two ("incoming request", "request completed"): each line
 * cost the session check ~5% of its CPU in serialising and writing (issue 35). The arrival line is
 * still there at LOG_LEVEL=debug, for a request that never completes.
 */
export class RequestLogLines extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
