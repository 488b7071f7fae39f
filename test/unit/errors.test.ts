import { describe, expect, it } from 'vitest';
import { ConnectionWaitTimeout } from '../../src/db/pglite-dialect.js';
import { toAppError } from '../../src/http/errors.js';

describe('toAppError', () => {
  it('maps database connection failures to the unavailable envelope message', () => {
    for (const error of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new Error('Connection terminated due to connection timeout'),
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('terminating connection due to idle-in-transaction timeout'), { code: '25P03' }),
    ]) {
      const appError = toAppError(error, 200);
      expect(appError?.message).toBe('Service unavailable: the database cannot be reached; try again shortly');
      expect(appError?.retryAfterSeconds).toBe(5);
    }
  });

  it('maps a database wait that reached its bound to what happened and when to retry', () => {
    const cases: [Error, string, number][] = [
      [new Error('timeout exceeded when trying to connect'), 'Service unavailable: the database is busy (no connection came free in time); try again in 2 seconds', 2],
      [new ConnectionWaitTimeout(500), 'Service unavailable: the database is busy (no connection came free in time); try again in 2 seconds', 2],
      [
        Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' }),
        'Service unavailable: other work holds a lock on the data this request needs; try again in 5 seconds',
        5,
      ],
      [
        Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
        'Service unavailable: the database took too long over this request; try again in 5 seconds',
        5,
      ],
    ];
    for (const [error, message, seconds] of cases) {
      const appError = toAppError(error, 200);
      expect(appError?.message).toBe(message);
      expect(appError?.retryAfterSeconds).toBe(seconds);
      expect(appError?.httpStatus).toBe(200);
    }
  });

  it('leaves unexpected errors to the generic handler', () => {
    expect(toAppError(new TypeError('x is undefined'), 200)).toBeUndefined();
  });
});
