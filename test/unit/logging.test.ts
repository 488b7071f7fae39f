import pino from 'pino';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loggerOptions, redactingChild, redactUrl, requestLoggerFactory } from '../../src/http/logging.js';

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

describe('log redaction by serializers', () => {
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

  it('redacts a secret parameter however its key is spelled, and leaves the other pairs as sent', () => {
    expect(redactUrl('/a.php?tz=Europe%2FMadrid&SESSION=s1&x=a+b')).toBe('/a.php?tz=Europe%2FMadrid&SESSION=%5Bredacted%5D&x=a+b');
    expect(redactUrl('/a.php?sess%69on=s2&new%5Fpassword=s3&password')).toBe('/a.php?sess%69on=%5Bredacted%5D&new%5Fpassword=%5Bredacted%5D&password=%5Bredacted%5D');
    expect(redactUrl('/a.php?session=s4&session=s5')).toBe('/a.php?session=%5Bredacted%5D&session=%5Bredacted%5D');
    // An undecodable key is not a parameter the reader would take as a secret: left as sent.
    expect(redactUrl('/a.php?sess%ZZion=x&tz=UTC')).toBe('/a.php?sess%ZZion=x&tz=UTC');
    expect(redactUrl('/a.php')).toBe('/a.php');
  });
});

describe('the request logger', () => {
  const request = { method: 'GET', url: '/api/x.php?session=secret-6', ip: '127.0.0.1', id: 'r2' };

  it("writes the completion line through the parent, the same line as a pino child's", () => {
    const { logger, lines } = capture();
    const parent = redactingChild(logger);
    parent.child({ reqId: 'r2' }).info({ req: request, responseTime: 1 }, 'request completed');
    const lazy = requestLoggerFactory(parent, { reqId: 'r2' }, {}) as unknown as { line: (level: 'info', fields: object, message: string) => void };
    lazy.line('info', { req: request, responseTime: 1 }, 'request completed');
    const [child, through] = lines.map(({ time: _time, ...rest }) => rest);
    expect(Object.keys(through!)).toEqual(Object.keys(child!));
    expect(through).toEqual(child);
    expect(JSON.stringify(lines)).not.toMatch(/secret-/);
  });

  it('becomes a pino child on first use, with the route options (level), and keeps the request id on every line', () => {
    const { logger, lines } = capture();
    const log = requestLoggerFactory(redactingChild(logger), { reqId: 'r3' }, { level: 'warn' });
    expect(log.level).toBe('warn');
    log.info('dropped at warn');
    log.warn({ code: 'x' }, 'kept');
    log.child({ part: 1 }).error('from a grandchild');
    expect(lines.map((l) => [l.reqId, l.msg, l.part])).toEqual([
      ['r3', 'kept', undefined],
      ['r3', 'from a grandchild', 1],
    ]);
  });
});
