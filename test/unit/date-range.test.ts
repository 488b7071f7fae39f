import { describe, expect, it } from 'vitest';
import { instantRange } from '../../src/domain/shared/date-range.js';

describe('instantRange (date_from/date_to in the request time zone)', () => {
  it('covers whole days, minutes or seconds of the wall clock, across a DST change', () => {
    // Madrid moves to summer time on 31 March 2024: that day is 23 hours long.
    const day = instantRange('2024-03-31', '2024-03-31', 'Europe/Madrid');
    expect(day.from?.toISOString()).toBe('2024-03-30T23:00:00.000Z');
    expect(day.before?.toISOString()).toBe('2024-03-31T22:00:00.000Z');
    expect(instantRange(undefined, '2024-03-31 10:30', 'UTC').before?.toISOString()).toBe('2024-03-31T10:31:00.000Z');
    expect(instantRange(undefined, '2024-03-31 10:30:15', 'UTC').before?.toISOString()).toBe('2024-03-31T10:30:16.000Z');
    expect(instantRange(undefined, undefined, 'UTC')).toEqual({});
  });

  it('refuses impossible dates and reversed ranges naming the parameter', () => {
    expect(() => instantRange('2023-02-29', undefined, 'UTC')).toThrow("Invalid parameter 'date_from'");
    expect(() => instantRange(undefined, '2024-13-01', 'UTC')).toThrow("Invalid parameter 'date_to'");
    expect(() => instantRange('2024-03-02', '2024-03-01', 'UTC')).toThrow("Invalid parameter 'date_to': must not be before date_from");
    expect(() => instantRange('03/02/2024', undefined, 'UTC')).toThrow("Invalid parameter 'date_from'");
  });
});
