import { DateTime } from 'luxon';
import { Errors } from '../errors.js';

/** A half-open instant range [from, before) built from the wall-clock filter dates of a request. */
export interface InstantRange {
  from?: Date;
  before?: Date;
}

const FORMATS: [RegExp, string, 'day' | 'minute' | 'second'][] = [
  [/^\d{4}-\d{2}-\d{2}$/, 'yyyy-MM-dd', 'day'],
  [/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/, 'yyyy-MM-dd HH:mm', 'minute'],
  [/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, 'yyyy-MM-dd HH:mm:ss', 'second'],
];

function wallClock(name: string, text: string, tz: string): { start: DateTime; unit: 'day' | 'minute' | 'second' } {
  const format = FORMATS.find(([pattern]) => pattern.test(text));
  if (!format) throw Errors.invalidParameter(name, "must be a date as 'YYYY-MM-DD HH:MM:SS'");
  const start = DateTime.fromFormat(text, format[1], { zone: tz });
  if (!start.isValid) throw Errors.invalidParameter(name, `'${text}' is not a valid calendar date and time`);
  // The database driver's ISO text is readable only for years 1 to 9999 once shifted to UTC.
  if (start.year < 2 || start.year > 9998) throw Errors.invalidParameter(name, 'must be a date between the years 0002 and 9998');
  return { start, unit: format[2] };
}

/**
 * `date_from`/`date_to` are wall-clock times in the request's `tz`. `date_to` is inclusive of the whole
 * unit it names ('2024-03-01' covers that day, '... 10:30' that minute), which is what a person picking
 * a date in a form means.
 */
export function instantRange(dateFrom: string | undefined, dateTo: string | undefined, tz: string): InstantRange {
  const range: InstantRange = {};
  if (dateFrom !== undefined) range.from = wallClock('date_from', dateFrom, tz).start.toJSDate();
  if (dateTo !== undefined) {
    const { start, unit } = wallClock('date_to', dateTo, tz);
    range.before = start.plus({ [`${unit}s`]: 1 }).toJSDate();
  }
  if (range.from && range.before && range.before <= range.from) {
    throw Errors.invalidParameter('date_to', 'must not be before date_from');
  }
  return range;
}
