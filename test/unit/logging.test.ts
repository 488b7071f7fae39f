import pino from 'pino';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loggerOptions, redactingChild } from '../../src/http/logging.js';

/** The lines a logger with the service's options writes. */
function capture() {
  const lines: Record<string, any>[] = [];
  const logger = pino(
    { ...loggerOptions('trace') },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, any>);
        done();
      },
    }),
  );
  return { logger, lines };
}

describe('log redaction by serializers (issue 35)', () => {
  it("censors the request headers in @fastify/multipart's busboy options, keeping the others", () => {
    const { logger, lines } = capture();
    for (const log of [logger, redactingChild(logger)]) {
      log.trace({ busboyOptions: { limits: { files: 20 }, headers: { authorization: 'Bearer secret-1', Cookie: 'session=secret-2', 'content-type': 'multipart/form-data' } } }, 'Providing options to busboy');
    }
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line.busboyOptions).toEqual({ limits: { files: 20 }, headers: { authorization: '[redacted]', Cookie: '[redacted]', 'content-type': 'multipart/form-data' } });
    }
    expect(JSON.stringify(lines)).not.toMatch(/secret-/);
  });

  it('writes a request as method, URL with secret parameters redacted, address and id: never its headers', () => {
    const { logger, lines } = capture();
    const request = { method: 'GET', url: '/api/x.php?session=secret-3&tz=UTC', ip: '127.0.0.1', id: 'r1', headers: { authorization: 'Bearer secret-4', cookie: 'session=secret-5' } };
    redactingChild(logger).info({ req: request }, 'request completed');
    expect(lines[0]!.req).toEqual({ method: 'GET', url: '/api/x.php?session=%5Bredacted%5D&tz=UTC', ip: '127.0.0.1', reqId: 'r1' });
    expect(JSON.stringify(lines)).not.toMatch(/secret-/);
  });
});
