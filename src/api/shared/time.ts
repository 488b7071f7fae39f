import { DateTime } from 'luxon';
import { Errors } from '../../domain/errors.js';
import { parseWallClock } from '../../domain/shared/wall-clock.js';

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
  const parsed = parseWallClock(text, tz, parameter);
  if (!parsed) throw Errors.invalidParameter(parameter, `'${text}' is not a valid date`);
  return (bound === 'to' ? parsed.start.plus({ [parsed.unit]: 1 }) : parsed.start).toJSDate();
}
