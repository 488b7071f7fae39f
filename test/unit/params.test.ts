import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { p, parseParams } from '../../src/http/params.js';

describe('parseParams', () => {
  const schema = z.object({ job_id: p.int(), status: p.int().optional(), sort: p.string().default('desc'), tz: p.tz() });

  it('coerces numeric strings and treats empty fields as absent', () => {
    expect(parseParams(schema, { job_id: '7', status: '', sort: ' ', tz: 'Europe/Madrid' })).toEqual({ job_id: 7, sort: 'desc', tz: 'Europe/Madrid' });
  });

  it('names a missing parameter, also when it was posted empty', () => {
    expect(() => parseParams(schema, { tz: 'UTC' })).toThrow("Missing required parameter 'job_id'");
    expect(() => parseParams(schema, { job_id: '', tz: 'UTC' })).toThrow("Missing required parameter 'job_id'");
  });

  it('names an invalid parameter and an unknown time zone', () => {
    expect(() => parseParams(schema, { job_id: 'x', tz: 'UTC' })).toThrow("Invalid parameter 'job_id': must be an integer");
    expect(() => parseParams(schema, { job_id: '1', tz: 'Mars/Olympus' })).toThrow("Invalid parameter 'tz': 'Mars/Olympus' is not a known time zone");
  });

  it('reads flags and id lists as legacy clients send them', () => {
    const s = z.object({ enabled: p.flag(), ids: p.idList() });
    expect(parseParams(s, { enabled: '1', ids: '3, 4,5' })).toEqual({ enabled: 1, ids: [3, 4, 5] });
    expect(() => parseParams(s, { enabled: '2', ids: '1' })).toThrow("Invalid parameter 'enabled': must be 0 or 1");
    expect(() => parseParams(s, { enabled: '0', ids: '1,x' })).toThrow("Invalid parameter 'ids'");
  });
});
