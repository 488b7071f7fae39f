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
  const start = DateTime.fromFormat(text, format[1], { zone: tz });
  if (!start.isValid) return undefined;
  // The database driver's ISO text is readable only for years 1 to 9999 once shifted to UTC.
  if (start.year < 2 || start.year > 9998) throw Errors.invalidParameter(parameter, 'must be a date between the years 0002 and 9998');
  return { start, unit: format[2] };
}
