import type { FastifyReply, FastifyRequest } from 'fastify';
import { ok } from './envelope.js';

/**
 * A server-sent-events reply. Nothing is written until the first event, so a failure before it
 * still answers the ordinary error envelope (throw it); after that, `fail` sends the envelope the
 * one error path renders as an `error` event. `done` ends the stream with the success envelope.
 */
export function eventStream(request: FastifyRequest, reply: FastifyReply) {
  const abort = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    reply.hijack();
    reply.raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
    });
  };
  const write = (event: string, data: unknown) => {
    start();
    reply.raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  return {
    /** Aborted when the client goes away mid-stream. */
    signal: abort.signal,
    get started() {
      return started;
    },
    send: write,
    /** The success envelope, plus any extra properties, as the last event. */
    done(data: unknown, extra: Record<string, unknown> = {}) {
      write('done', { ...ok(data), ...extra });
      reply.raw.end();
    },
    /** A failure after the first event: the error path's envelope as the last event. */
    fail(error: unknown) {
      write('error', request.server.renderError(error, request).envelope);
      reply.raw.end();
    },
  };
}
