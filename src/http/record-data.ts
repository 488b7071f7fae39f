import { z } from 'zod';

/**
 * The one rule for a parameter that carries a record as a JSON object (`data` of use cases and
 * clients): front ends read a record, change a field and send the whole record back. Fields the
 * service sets itself (`readOnly`: ids, counters, timestamps, hashes) are ignored and stay as they
 * are; a name that is no field of the record is refused, every such name listed. Read it with
 * `p.json(recordData(...))`, which parses the text and names the failing field.
 */
export function recordData<T extends z.ZodRawShape>(writable: T, readOnly: readonly string[]) {
  const ignored = new Set(readOnly);
  return z.preprocess(
    (value) =>
      value && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).filter(([key]) => !ignored.has(key)))
        : value,
    z.object(writable).strict(),
  );
}
