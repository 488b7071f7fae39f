import { Errors } from '../errors.js';
import { parseWallClock } from '../shared/wall-clock.js';

/** A half-open instant range [from, before) built from the wall-clock filter dates of a request. */
export interface InstantRange {
  from?: Date;
  before?: Date;
}

function wallClock(name: string, text: string, tz: string) {
  if (!/^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2})?)?$/.test(text)) throw Errors.invalidParameter(name, "must be a date as 'YYYY-MM-DD HH:MM:SS'");
  const parsed = parseWallClock(text, tz, name);
  if (!parsed) throw Errors.invalidParameter(name, `'${text}' is not a valid calendar date and time`);
  return parsed;
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
    range.before = start.plus({ [unit]: 1 }).toJSDate();
  }
  if (range.from && range.before && range.before <= range.from) {
    throw Errors.invalidParameter('date_to', 'must not be before date_from');
  }
  return range;
}
