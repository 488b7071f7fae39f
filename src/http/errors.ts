import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { CONNECTION_WAIT_TIMEOUT } from '../db/pglite-dialect.js';
import { AppError, Errors, isAppError } from '../domain/errors.js';
import { BODY_LIMIT_BYTES } from './edge.js';
import { failure, type ErrorEnvelope } from './envelope.js';

/**
 * Codes of connection-level database failures: server restart, refused, terminated (pg_terminate_backend,
 * 57P01; a transaction left idle past its bound, 25P03).
 */
const DATABASE_DOWN = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02', '57P03', '25P03', '08000', '08003', '08006', '08001', '08004']);

/**
 * Seconds a client is told to wait after a database bound ended its request (docs/interface-notes.md, Bounded
 * database waits): a pooled connection comes free as soon as any request ends; a lock or a slow statement
 * belongs to work of unknown length; a restarted server takes a few seconds.
 */
const RETRY_AFTER_BUSY = 2;
const RETRY_AFTER_CONTENDED = 5;
const RETRY_AFTER_DOWN = 5;

/** A database wait that reached its bound, or a lost database, as the envelope's message; undefined for anything else. */
function databaseTrouble(error: unknown): AppError | undefined {
  const e = error as { code?: string; message?: string } | undefined;
  const code = e?.code;
  const message = e?.message ?? '';
  // pg-pool's wait for a free connection, and the embedded database's for its only one.
  if (code === CONNECTION_WAIT_TIMEOUT || message === 'timeout exceeded when trying to connect') {
    return Errors.databaseBusy('the database is busy (no connection came free in time)', RETRY_AFTER_BUSY);
  }
  if (code === '55P03') return Errors.databaseBusy('other work holds a lock on the data this request needs', RETRY_AFTER_CONTENDED);
  if (code === '57014') return Errors.databaseBusy('the database took too long over this request', RETRY_AFTER_CONTENDED);
  if ((code && DATABASE_DOWN.has(code)) || /Connection terminated|connection timeout|Client has encountered a connection error|terminating connection/i.test(message)) {
    return Errors.databaseUnreachable(RETRY_AFTER_DOWN);
  }
  return undefined;
}

/**
 * Turns any thrown value into an AppError for the envelope. Client mistakes Fastify itself detects
 * (malformed JSON, unsupported content type, body too large) become application errors too: a legacy
 * client must never see a non-2xx reply for bad input.
 */
export function toAppError(error: unknown, maxUploadMb: number, contentType?: string): AppError | undefined {
  if (isAppError(error)) return error;
  const fe = error as Partial<FastifyError> & { code?: string };
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return Errors.uploadTooLarge(`the request exceeds the maximum of ${BODY_LIMIT_BYTES / 1024 / 1024} MB for a request without files (send files as multipart/form-data)`);
  }
  if (fe.code === 'FST_REQ_FILE_TOO_LARGE' || fe.statusCode === 413) {
    return Errors.uploadTooLarge(`the request exceeds the maximum size of ${maxUploadMb} MB`);
  }
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    // Fastify's message names no type: quote the request's own header.
    return Errors.unsupportedContentType(contentType ?? '');
  }
  // busboy reports a multipart body without boundary, or cut short, as a plain Error (no code, no status).
  if (/^Multipart: Boundary not found$|unexpected end of multipart data$/i.test(fe.message ?? '')) {
    return Errors.invalidRequest('the multipart/form-data body is malformed or cut off');
  }
  // Postgres text and jsonb cannot hold NUL; parseParams refuses it in parameters, this catches it inside JSON fields.
  if (fe.code === '22021' || fe.code === '22P05') return Errors.invalidRequest('text must not contain NUL characters');
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return Errors.invalidRequest(fe.message ?? 'malformed request');
  }
  return databaseTrouble(error);
}

/** Longest quoted name or value an error message repeats; a hostile megabyte-long one is cut. */
const QUOTED_MAX = 64;
const LONG_QUOTED = new RegExp(`'([^']{${QUOTED_MAX + 1},})'`, 'g');

/** Cuts every quoted part of a message ('...') longer than QUOTED_MAX, and the whole message at 2,000 characters. */
export function cutQuoted(message: string): string {
  const cut = message.replace(LONG_QUOTED, (_all, quoted: string) => `'${quoted.slice(0, QUOTED_MAX)}…'`);
  return cut.length > 2000 ? `${cut.slice(0, 2000)}…` : cut;
}

/**
 * The one rendering of a failure: an application error's message, or a generic one naming the request
 * id for anything unexpected; logged once. The HTTP status is what the error handler replies with.
 */
export type ErrorRenderer = (error: unknown, request: FastifyRequest) => { httpStatus: number; envelope: ErrorEnvelope; retryAfterSeconds?: number };

export function registerErrorHandling(app: FastifyInstance, options: { maxUploadMb: number }): void {
  const render: ErrorRenderer = (error, request) => {
    const appError = toAppError(error, options.maxUploadMb, request.headers['content-type']);
    if (appError) {
      request.errorCode = appError.code;
      const message = cutQuoted(appError.message);
      request.log.info({ code: appError.code, reason: message }, 'request failed');
      return { httpStatus: appError.httpStatus, envelope: failure(message), retryAfterSeconds: appError.retryAfterSeconds };
    }
    request.log.error({ err: error }, 'unexpected error');
    return { httpStatus: 500, envelope: failure(`Internal error; reference ${request.id}`) };
  };
  // Also for replies that render errors themselves, after their headers went out (event streams).
  app.decorate('renderError', render);

  app.setErrorHandler((error, request, reply) => {
    const { httpStatus, envelope, retryAfterSeconds } = render(error, request);
    if (retryAfterSeconds !== undefined) void reply.header('retry-after', String(retryAfterSeconds));
    return reply.code(httpStatus).send(envelope);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = (request.url.split('?')[0] ?? request.url).slice(0, 200);
    return reply.code(404).send(failure(Errors.unknownResource(`${request.method} ${path}`).message));
  });
}
