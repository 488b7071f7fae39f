import { DateTime } from 'luxon';
import { Errors } from '../../domain/errors.js';
import { parseWallClock } from '../../domain/shared/wall-clock.js';

/**
 * One Intl formatter per zone (zones are validated IANA names, so the cache stays small): listings format
 * two or three timestamps per row, and luxon's fromJSDate + toFormat cost several times more per call.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
const LEGACY_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

function formatterFor(tz: string): Intl.DateTimeFormat {
  let formatter = formatters.get(tz);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('sv-SE', {
      timeZone: tz,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(tz, formatter);
  }
  return formatter;
}

/** Legacy timestamp text `YYYY-MM-DD HH:MM:SS` of an instant, in the caller's time zone. */
export function formatTimestamp(instant: Date, tz: string): string {
  // Swedish conventions write exactly the legacy form, `2024-03-01 09:30:00`.
  const text = formatterFor(tz).format(instant);
  // Anything else (years outside 1000-9999, an ICU without that locale) takes luxon's exact rendering.
  return LEGACY_TIMESTAMP.test(text) ? text : DateTime.fromJSDate(instant, { zone: tz }).toFormat('yyyy-MM-dd HH:mm:ss');
}

export const formatNullableTimestamp = (instant: Date | null, tz: string): string | null =>
  instant === null ? null : formatTimestamp(instant, tz);

/**
 * A date parameter (`p.date()`: `YYYY-MM-DD[ HH:MM[:SS]]`) read in the caller's zone. As an upper bound
 * it is inclusive at its own precision and the answer is the exclusive end: "to 2024-01-31" covers the
 * whole day, "to 2024-01-31 10:00" the whole minute, which is what a user picking a range expects.
 */
export function wireDateToInstant(text: string, tz: string, parameter: string, bound: 'from' | 'to' = 'from'): Date {
  const parsed = parseWallClock(text, tz, parameter);
  if (!parsed) throw Errors.invalidParameter(parameter, `'${text}' is not a valid date`);
  return (bound === 'to' ? parsed.start.plus({ [parsed.unit]: 1 }) : parsed.start).toJSDate();
}
