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

const serializers = {
  req(request: { method: string; url: string; ip?: string; id?: string }) {
    // A URL may be 16 KB (the header limit): a log line keeps its first 1,000 characters.
    const url = redactUrl(request.url);
    return { method: request.method, url: url.length > 1000 ? `${url.slice(0, 1000)}…` : url, ip: request.ip, reqId: request.id };
  },
};
const redact = {
  paths: [
    'req.headers.authorization',
    'req.headers.cookie',
    'res.headers["set-cookie"]',
    // @fastify/multipart traces the request headers it hands to busboy (LOG_LEVEL=trace).
    'busboyOptions.headers.authorization',
    'busboyOptions.headers.cookie',
  ],
  censor: '[redacted]',
};

/** pino options: request lines without secrets (query values, cookies, Authorization). */
export function loggerOptions(level: string): LoggerOptions {
  return { level, redact, serializers };
}

/** Any logger handed to the app gets the same redaction, whoever built it. */
export function redactingChild(logger: Logger): FastifyBaseLogger {
  return logger.child({}, { serializers, redact });
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
