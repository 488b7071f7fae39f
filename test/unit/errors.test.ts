import { describe, expect, it } from 'vitest';
import { toAppError } from '../../src/http/errors.js';

describe('toAppError', () => {
  it('maps database connection failures to the unavailable envelope message', () => {
    for (const error of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new Error('timeout exceeded when trying to connect'),
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ]) {
      expect(toAppError(error, 200)?.message).toBe('Service unavailable: the database cannot be reached; try again shortly');
    }
  });

  it('leaves unexpected errors to the generic handler', () => {
    expect(toAppError(new TypeError('x is undefined'), 200)).toBeUndefined();
  });
});
