import { DateTime } from 'luxon';
import { Errors } from '../../domain/errors.js';

/** Legacy timestamp text `YYYY-MM-DD HH:MM:SS` of an instant, in the caller's time zone. */
export function formatTimestamp(instant: Date, tz: string): string {
  return DateTime.fromJSDate(instant, { zone: tz }).toFormat('yyyy-MM-dd HH:mm:ss');
}

export const formatNullableTimestamp = (instant: Date | null, tz: string): string | null =>
  instant === null ? null : formatTimestamp(instant, tz);

/**
 * A date parameter (`p.date()`: `YYYY-MM-DD[ HH:MM[:SS]]`) read in the caller's zone. As an upper bound
 * it is inclusive at its own precision and the answer is the exclusive end: "to 2024-01-31" covers the
 * whole day, "to 2024-01-31 10:00" the whole minute, which is what a user picking a range expects.
 */
export function wireDateToInstant(text: string, tz: string, parameter: string, bound: 'from' | 'to' = 'from'): Date {
  const unit = /^\d{4}-\d{2}-\d{2}$/.test(text) ? 'days' : text.length === 16 ? 'minutes' : 'seconds';
  const format = unit === 'days' ? 'yyyy-MM-dd' : unit === 'minutes' ? 'yyyy-MM-dd HH:mm' : 'yyyy-MM-dd HH:mm:ss';
  const parsed = DateTime.fromFormat(text, format, { zone: tz });
  if (!parsed.isValid) throw Errors.invalidParameter(parameter, `'${text}' is not a valid date`);
  // The database driver's ISO text is readable only for years 1 to 9999 once shifted to UTC.
  if (parsed.year < 2 || parsed.year > 9998) throw Errors.invalidParameter(parameter, 'must be a date between the years 0002 and 9998');
  return (bound === 'to' ? parsed.plus({ [unit]: 1 }) : parsed).toJSDate();
}
