import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { formatNullableTimestamp, formatTimestamp } from '../../src/api/shared/time.js';

const luxon = (d: Date, tz: string) => DateTime.fromJSDate(d, { zone: tz }).toFormat('yyyy-MM-dd HH:mm:ss');
const ZONES = ['UTC', 'Europe/Madrid', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns', 'Etc/GMT+12'];

describe('legacy timestamps in the caller zone', () => {
  it('writes YYYY-MM-DD HH:MM:SS, midnight as 00 and across daylight-saving changes', () => {
    expect(formatTimestamp(new Date('2024-03-01T09:30:05.900Z'), 'UTC')).toBe('2024-03-01 09:30:05');
    expect(formatTimestamp(new Date('2024-03-01T23:00:00Z'), 'Europe/Madrid')).toBe('2024-03-02 00:00:00');
    // Madrid's clocks jump from 02:00 to 03:00 at 01:00 UTC on 2024-03-31 and back at 01:00 UTC on 2024-10-27.
    expect(formatTimestamp(new Date('2024-03-31T00:59:59Z'), 'Europe/Madrid')).toBe('2024-03-31 01:59:59');
    expect(formatTimestamp(new Date('2024-03-31T01:00:00Z'), 'Europe/Madrid')).toBe('2024-03-31 03:00:00');
    expect(formatTimestamp(new Date('2024-10-27T00:30:00Z'), 'Europe/Madrid')).toBe('2024-10-27 02:30:00');
    expect(formatTimestamp(new Date('2024-10-27T01:30:00Z'), 'Europe/Madrid')).toBe('2024-10-27 02:30:00');
    expect(formatTimestamp(new Date('2024-06-01T12:00:00Z'), 'Asia/Kathmandu')).toBe('2024-06-01 17:45:00');
    expect(formatNullableTimestamp(null, 'UTC')).toBeNull();
  });

  it('answers what luxon answers for any instant and zone, years outside 1000-9999 included', () => {
    const instants = Array.from({ length: 2000 }, (_, i) => new Date(Date.UTC(1901, 0, 1) + i * 1_987_654_321 + (i % 1000)));
    instants.push(new Date('0999-12-31T23:59:59Z'), new Date('9999-12-31T23:59:59Z'), new Date('1970-01-01T00:00:00Z'));
    for (const tz of ZONES) for (const d of instants) expect(formatTimestamp(d, tz)).toBe(luxon(d, tz));
  });
});
