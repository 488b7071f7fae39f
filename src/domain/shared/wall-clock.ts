import { DateTime } from 'luxon';
import { Errors } from '../errors.js';

export type WallClockUnit = 'days' | 'minutes' | 'seconds';

const FORMATS: [RegExp, string, WallClockUnit][] = [
  [/^\d{4}-\d{2}-\d{2}$/, 'yyyy-MM-dd', 'days'],
  [/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/, 'yyyy-MM-dd HH:mm', 'minutes'],
  [/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, 'yyyy-MM-dd HH:mm:ss', 'seconds'],
];

/**
 * The one reader of the spec's date filters (`Y-m-d H:i:s`, also without seconds or time) as a wall
 * clock in `tz`. Answers undefined for text that is no such date, so each caller words its own error;
 * `unit` is the precision written, which makes an upper bound inclusive of that whole unit.
 */
export function parseWallClock(text: string, tz: string, parameter: string): { start: DateTime; unit: WallClockUnit } | undefined {
  const format = FORMATS.find(([pattern]) => pattern.test(text));
  if (!format) return undefined;
  const read = DateTime.fromFormat(text, format[1], { zone: tz });
  if (!read.isValid) return undefined;
  // A wall time the clocks show twice (the hour repeated when DST ends) is its first instant. luxon alone
  // resolves it by the offset the zone has today, so the same request meant another hour in summer.
  // A wall time skipped when DST starts is already read as the instant one gap later (02:30 -> 03:30).
  const start = read.getPossibleOffsets().reduce((first, other) => (other < first ? other : first));
  // The database driver's ISO text is readable only for years 1 to 9999 once shifted to UTC.
  if (start.year < 2 || start.year > 9998) throw Errors.invalidParameter(parameter, 'must be a date between the years 0002 and 9998');
  return { start, unit: format[2] };
}
