import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyHttpOptions, FastifyInstance } from 'fastify';
import type { Config, TrustProxy } from '../config.js';
import { Errors } from '../domain/errors.js';
import { failure } from './envelope.js';

/**
 * The connection edge: what a slow, stalled or oversized client meets before any route runs. The
 * timeouts follow nginx (client_header_timeout, client_body_timeout, keepalive_timeout); every
 * refusal answers the envelope.
 */

/** Node's default: the request line and headers together. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Boundaries, part headers and the small form fields around the files of an upload. */
export const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;
/** Largest body of a request without files. */
export const BODY_LIMIT_BYTES = 10 * 1024 * 1024;
/** After a refusal, what the client still sends is read and dropped this long, so the reply is not lost to a reset (nginx's lingering close). */
const LINGER_MS = 2000;

type Limits = Pick<Config, 'headersTimeoutMs' | 'keepAliveTimeoutMs'>;

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, '')} MB`;

/** Fastify's server options for the connection limits and the envelope on refusals Node makes itself. */
export function edgeServerOptions(limits: Limits): FastifyHttpOptions<Server> {
  const answered = new WeakSet<Socket>();
  return {
    http: {
      headersTimeout: limits.headersTimeoutMs,
      // Node checks the headers timeout on this tick (30 s by default): keep the cut within a quarter of it.
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(limits.headersTimeoutMs / 4))),
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // No limit on a whole request: a 200 MB upload from a phone may take long; its pauses are bounded instead.
    requestTimeout: 0,
    bodyLimit: BODY_LIMIT_BYTES,
    // While draining, a request arriving on a connection still open is served (with Connection: close)
    // instead of Fastify's 503 body, which is not the envelope.
    return503OnClosing: false,
    // Fastify calls it with the instance as `this`.
    clientErrorHandler(this: FastifyInstance, error: Error, socket: Socket) {
      const code = (error as Error & { code?: string }).code;
      // Parsing goes on after the first error: answer once.
      if (code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
      answered.add(socket);
      const inProgress = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
      const [status, why] =
        code === 'HPE_HEADER_OVERFLOW'
          ? [431, `the request line and headers exceed ${MAX_HEADER_BYTES / 1024} KB; send long parameters in the body`]
          : code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? [408, `the request headers did not arrive within ${Number((limits.headersTimeoutMs / 1000).toFixed(1))} seconds`]
            : [400, 'malformed HTTP request'];
      this.log.info({ code, status, remoteAddress: socket.remoteAddress }, 'connection refused before routing');
      if (!socket.writable || inProgress?.headersSent) {
        socket.destroy();
        return;
      }
      const body = JSON.stringify(failure(Errors.invalidRequest(why).message));
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      socket.resume();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    },
  };
}

/**
 * Fastify's trustProxy for TRUST_PROXY. A hop count trusts that many proxies in front, whoever they are
 * (Express's meaning; Fastify itself now ignores numbers): only safe when the API is reachable through
 * them alone, which is why addresses are the better setting.
 */
export function trustProxyOption(trust: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

function carriesBody(request: IncomingMessage): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > 0;
}

/**
 * A client that stops sending in the middle of a body is cut after `bodyTimeoutMs` without a byte
 * (its request fails with a stream error wherever the body is read, multipart included). The socket
 * timeout only guards the body: once the request is complete it is lifted, so a slow reply (event
 * streams, language-model calls) is never cut by it.
 */
export function limitBodyPauses(server: Server, bodyTimeoutMs: number, log: FastifyBaseLogger): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!carriesBody(request) || response.writableFinished) return;
    request.socket.setTimeout(bodyTimeoutMs);
    // A 'timeout' listener on the response keeps Node from destroying the socket by itself.
    response.on('timeout', (socket: Socket) => {
      if (request.complete) {
        socket.setTimeout(server.timeout);
        return;
      }
      log.info({ remoteAddress: socket.remoteAddress, url: request.url?.slice(0, 200) }, `no body bytes for ${bodyTimeoutMs} ms; connection closed`);
      socket.destroy();
    });
  });
}

/**
 * Refuses a body announced over the limit at once, before reading it: HTTP 413 with the envelope and
 * `Connection: close` (nginx's client_max_body_size does the same). Multipart bodies may carry the
 * upload limit plus their overhead; other bodies the body limit.
 */
export function refuseAnnouncedOversize(app: FastifyInstance, maxUploadBytes: number): void {
  // Callback hooks, not async ones, here and in the hooks of every request below: an async hook costs each
  // request a promise and a turn of the microtask queue (the session check's CPU: docs/benchmarks.md,
  // sessions).
  app.addHook('onRequest', function refuseOversize(request, reply, done) {
    const announced = Number(request.headers['content-length']);
    if (!Number.isFinite(announced)) return done();
    const multipart = /^multipart\/form-data/i.test(request.headers['content-type'] ?? '');
    const limit = multipart ? maxUploadBytes + MULTIPART_OVERHEAD_BYTES : BODY_LIMIT_BYTES;
    if (announced <= limit) return done();
    const error = multipart
      ? Errors.uploadTooLarge(`the request announces ${megabytes(announced)}, over the maximum upload size of ${megabytes(maxUploadBytes)}`)
      : Errors.uploadTooLarge(`the request announces ${megabytes(announced)}, over the maximum of ${megabytes(BODY_LIMIT_BYTES)} for a request without files (send files as multipart/form-data)`);
    request.errorCode = error.code;
    request.log.info({ code: error.code, announced }, 'request refused before its body');
    // Replying from a callback hook without calling done() ends the request here.
    void reply.code(413).header('connection', 'close').send(failure(error.message));
  });
}

type Lingering = Pick<Config, 'lingeringTimeMs' | 'lingeringMaxBytes'>;

/**
 * A reply sent before its request's body was read (every refusal of an upload, a body over the limit)
 * goes out at once with `Connection: close`; then what the client still sends is read and dropped until
 * its body ends, for at most `lingeringTimeMs` and `lingeringMaxBytes`, and only then is the connection
 * closed (nginx's lingering close). Without it a client that writes its whole body before reading (curl
 * with `Expect:` off, Python's http.client, a front end) blocks on a socket nobody reads until the body
 * timeout; and a socket closed with bytes unread is reset, which can drop the reply the client has not
 * read yet. A body announced over the byte bound could not be drained anyway: its connection closes at once.
 */
export function lingerAfterEarlyReplies(app: FastifyInstance, bounds: Lingering): void {
  app.addHook('onSend', function lingerAfterEarlyReply(request, reply, payload, done) {
    const raw = request.raw;
    // Injected requests have no `complete` (and no socket to linger on).
    if (raw.complete !== false || !carriesBody(raw)) return done(null, payload);
    reply.header('connection', 'close');
    if (Number(raw.headers['content-length']) > bounds.lingeringMaxBytes || !(typeof payload === 'string' || Buffer.isBuffer(payload))) return done(null, payload);
    const body = Buffer.from(payload);
    reply.header('content-length', body.length);
    done(null, lingeringReply(raw, body, bounds, request.log));
  });
}

/**
 * The reply as a stream that ends only when the request's body has been read to its end: Node closes a
 * `Connection: close` socket as soon as its reply ends, so the end has to wait for the drain. The reply's
 * bytes, with their Content-Length, are written at once.
 */
function lingeringReply(request: IncomingMessage, body: Buffer, bounds: Lingering, log: FastifyBaseLogger): Readable {
  const reply = new Readable({ read() {} });
  reply.push(body);
  const socket = request.socket;
  let dropped = 0;
  const stop = () => {
    clearTimeout(timer);
    request.off('data', drop);
    request.off('end', drained);
    socket.off('close', stop);
  };
  const drained = () => {
    stop();
    reply.push(null);
  };
  const cut = (why: string) => {
    stop();
    log.info({ dropped, remoteAddress: socket.remoteAddress }, `the body still arriving after the reply ${why}; connection closed`);
    socket.destroy();
  };
  const drop = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > bounds.lingeringMaxBytes) cut(`passed ${megabytes(bounds.lingeringMaxBytes)}`);
  };
  const timer = setTimeout(() => cut(`took longer than ${bounds.lingeringTimeMs} ms`), bounds.lingeringTimeMs);
  timer.unref();
  // Whatever read the body before (the multipart parser) stops; from here on it is dropped.
  request.unpipe();
  request.on('data', drop);
  request.once('end', drained);
  socket.once('close', stop);
  request.resume();
  return reply;
}
