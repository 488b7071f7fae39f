import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, Errors, isAppError } from '../domain/errors.js';
import { BODY_LIMIT_BYTES } from './edge.js';
import { failure, type ErrorEnvelope } from './envelope.js';

/** Codes of connection-level database failures (server restart, refused, terminated). */
const DATABASE_DOWN = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004']);

function isDatabaseDown(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  if (e?.code && DATABASE_DOWN.has(e.code)) return true;
  const message = e?.message ?? '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|terminating connection/i.test(message);
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
  if (isDatabaseDown(error)) return Errors.unavailable('the database cannot be reached; try again shortly');
  return undefined;
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
export type ErrorRenderer = (error: unknown, request: FastifyRequest) => { httpStatus: number; envelope: ErrorEnvelope };

export function registerErrorHandling(app: FastifyInstance, options: { maxUploadMb: number }): void {
  const render: ErrorRenderer = (error, request) => {
    const appError = toAppError(error, options.maxUploadMb, request.headers['content-type']);
    if (appError) {
      request.errorCode = appError.code;
      const message = cutQuoted(appError.message);
      request.log.info({ code: appError.code, reason: message }, 'request failed');
      return { httpStatus: appError.httpStatus, envelope: failure(message) };
    }
    request.log.error({ err: error }, 'unexpected error');
    return { httpStatus: 500, envelope: failure(`Internal error; reference ${request.id}`) };
  };
  // Also for replies that render errors themselves, after their headers went out (event streams).
  app.decorate('renderError', render);

  app.setErrorHandler((error, request, reply) => {
    const { httpStatus, envelope } = render(error, request);
    return reply.code(httpStatus).send(envelope);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = (request.url.split('?')[0] ?? request.url).slice(0, 200);
    return reply.code(404).send(failure(Errors.unknownResource(`${request.method} ${path}`).message));
  });
}
