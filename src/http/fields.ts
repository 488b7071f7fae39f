/**
 * The one `fields` projection of a listing: the wire fields the service resolved from `fields`
 * (through the resource's column whitelist, so every name is a field of the record), in the order
 * asked. A name the record lacks is left out rather than invented as null; no whitelist names one.
 */
export function projectFields<T extends Record<string, unknown>>(record: T, fields: readonly string[]): Partial<T> {
  const out: Partial<T> = {};
  for (const key of fields) if (Object.hasOwn(record, key)) out[key as keyof T] = record[key as keyof T];
  return out;
}
