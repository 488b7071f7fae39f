import { z } from 'zod';
import { Errors } from '../domain/errors.js';

/**
 * The one rule for a parameter that carries a record as a JSON object (`data` of use cases and
 * clients): front ends read a record, change a field and send the whole record back. Fields the
 * service sets itself (`readOnly`: ids, counters, timestamps, hashes) are ignored and stay as they
 * are; a name that is no field of the record is refused, every such name listed.
 */
export function recordData<T extends z.ZodRawShape>(writable: T, readOnly: readonly string[]) {
  const schema = z.object(writable).strict();
  const ignored = new Set(readOnly);
  return (text: string, parameter = 'data'): z.infer<typeof schema> => {
    const given: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(jsonObject(text, parameter))) if (!ignored.has(key)) given[key] = value;
    const result = schema.safeParse(given);
    if (result.success) return result.data;
    const unknown = result.error.issues.flatMap((issue) => (issue.code === 'unrecognized_keys' ? issue.keys : []));
    if (unknown.length > 0) {
      const names = unknown.map((key) => `'${key}'`).join(', ');
      throw Errors.invalidParameter(parameter, `unknown field${unknown.length > 1 ? 's' : ''} ${names}`);
    }
    const issue = result.error.issues[0]!;
    throw Errors.invalidParameter(parameter, `field '${issue.path.map(String).join('.')}' ${issue.message}`);
  };
}

function jsonObject(text: string, parameter: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw Errors.invalidParameter(parameter, 'is not valid JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw Errors.invalidParameter(parameter, 'must be a JSON object of fields');
  return value as Record<string, unknown>;
}
