import type { FastifyRequest } from 'fastify';
import { IANAZone } from 'luxon';
import { z } from 'zod';
import { Errors } from '../domain/errors.js';

/**
 * The one parameter reader. Legacy clients send the same parameter in the query string, an
 * urlencoded or multipart body, or JSON; like PHP's $_REQUEST, body values win over the query.
 * A repeated parameter keeps its last value, as PHP does.
 */
export function collectParams(request: FastifyRequest): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  const add = (source: unknown) => {
    if (!source || typeof source !== 'object' || Array.isArray(source) || Buffer.isBuffer(source)) return;
    for (const [key, value] of Object.entries(source as Record<string, unknown>)) {
      merged[key] = Array.isArray(value) && !key.endsWith('[]') ? value[value.length - 1] : value;
    }
  };
  add(request.query);
  add(request.body);
  return merged;
}

/** Validates the merged parameters with a zod schema; the first problem becomes a clear error. */
export function parseParams<S extends z.ZodType>(schema: S, params: Record<string, unknown>): z.infer<S> {
  // Legacy forms post every input, filled or not: an empty value is an absent one, so optional
  // parameters and defaults apply to it.
  const present: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    if (value === null || (typeof value === 'string' && value.trim() === '')) continue;
    // Postgres text cannot hold NUL: refuse it here, naming the parameter, instead of failing in SQL.
    if ((Array.isArray(value) ? value : [value]).some((v) => typeof v === 'string' && v.includes('\u0000'))) {
      throw Errors.invalidParameter(key, 'must not contain NUL characters');
    }
    present[key] = value;
  }
  const result = schema.safeParse(present);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const name = issue.path.length > 0 ? String(issue.path[0]) : 'parameters';
  const given = issue.path.length > 0 ? params[String(issue.path[0])] : params;
  if (given === undefined || given === null || given === '') throw Errors.missingParameter(name);
  // A tz of the wrong type (a JSON number, object or list) is as unknown a zone as a misspelt one.
  if (name === 'tz') throw Errors.invalidTimezone(typeof given === 'string' ? given : JSON.stringify(given));
  throw Errors.invalidParameter(name, issue.message);
}

const blankToUndefined = (value: unknown) =>
  value === '' || value === null || (typeof value === 'string' && value.trim() === '') ? undefined : value;

const toNumberLike = (value: unknown) => {
  const v = blankToUndefined(value);
  if (typeof v === 'string') {
    const trimmed = v.trim();
    return /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed) ? Number(trimmed) : v;
  }
  if (typeof v === 'boolean') return v ? 1 : 0;
  return v;
};

/**
 * Wire-parameter builders. Everything arrives as text from forms and query strings, so numbers are
 * coerced from numeric strings; an empty value counts as absent (legacy forms post empty fields).
 */
export const p = {
  int: () =>
    z.preprocess(
      toNumberLike,
      z.number({ error: 'must be an integer' }).int({ error: 'must be an integer' }).min(-2_147_483_648).max(2_147_483_647, { error: 'is too large' }),
    ),
  id: () =>
    z.preprocess(
      toNumberLike,
      z.number({ error: 'must be a positive integer id' }).int({ error: 'must be a positive integer id' }).min(1, { error: 'must be a positive integer id' }).max(2_147_483_647, { error: 'is too large' }),
    ),
  number: () => z.preprocess(toNumberLike, z.number({ error: 'must be a number' }).finite()),
  /** A string; numbers are accepted and turned into text. */
  string: (max = 10_000) =>
    z.preprocess(
      (v) => {
        const b = blankToUndefined(v);
        return typeof b === 'number' || typeof b === 'boolean' ? String(b) : b;
      },
      z.string({ error: 'must be a string' }).max(max, { error: `must be at most ${max} characters` }),
    ),
  /** A string that may legitimately be empty (e.g. clearing a name). */
  text: (max = 10_000) =>
    z.preprocess(
      (v) => (typeof v === 'number' ? String(v) : v === null ? undefined : v),
      z.string({ error: 'must be a string' }).max(max, { error: `must be at most ${max} characters` }),
    ),
  /** 0/1 flags as legacy forms send them. */
  flag: () =>
    z.preprocess(
      (v) => {
        const n = toNumberLike(v);
        if (n === 'true') return 1;
        if (n === 'false') return 0;
        return n;
      },
      z.union([z.literal(0), z.literal(1)], { error: 'must be 0 or 1' }),
    ),
  /** A standard IANA time zone (Area/City), checked with luxon. */
  tz: () =>
    z.preprocess(
      blankToUndefined,
      z.string({ error: 'is required' }).refine((zone) => IANAZone.isValidZone(zone), { error: 'is not a known time zone' }),
    ),
  /** `Y-m-d H:i:s` or `Y-m-d` as the spec's filters use. */
  date: () =>
    z.preprocess(
      blankToUndefined,
      z.string().regex(/^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2})?)?$/, { error: "must be a date as 'YYYY-MM-DD HH:MM:SS'" }),
    ),
  email: () => z.preprocess(blankToUndefined, z.string().trim().max(254).email({ error: 'must be an e-mail address' })),
  /** Comma-separated ids ("1,2,3"). */
  idList: () =>
    z.preprocess(
      (v) => {
        const b = blankToUndefined(v);
        if (typeof b === 'number') return [b];
        if (typeof b !== 'string') return b;
        return b.split(',').map((s) => s.trim()).filter(Boolean).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
      },
      z.array(z.number({ error: 'must be a comma-separated list of ids' }).int().min(1).max(2_147_483_647, { error: 'is too large' })).min(1).max(1000),
    ),
  /**
   * A JSON object sent as the text of one parameter (the chat area's `data`, see record-data.ts),
   * checked by `schema`; a problem names the field: "Invalid parameter 'data': field 'Temperature' must
   * be ...", or every unknown field.
   */
  json: <S extends z.ZodType>(schema: S, max = 100_000) =>
    z.preprocess(
      (v) => {
        const b = blankToUndefined(v);
        return typeof b === 'number' || typeof b === 'boolean' ? String(b) : b;
      },
      z
        .string({ error: 'must be a string' })
        .max(max, { error: `must be at most ${max} characters` })
        .transform((text, ctx): z.output<S> => {
          let value: unknown;
          try {
            value = JSON.parse(text);
          } catch {
            ctx.addIssue({ code: 'custom', message: 'is not valid JSON' });
            return z.NEVER;
          }
          if (!value || typeof value !== 'object' || Array.isArray(value)) {
            ctx.addIssue({ code: 'custom', message: 'must be a JSON object of fields' });
            return z.NEVER;
          }
          const result = schema.safeParse(value);
          if (result.success) return result.data;
          const unknown = result.error.issues.flatMap((issue) => (issue.code === 'unrecognized_keys' ? issue.keys : []));
          const issue = result.error.issues[0]!;
          const message =
            unknown.length > 0
              ? `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => `'${key}'`).join(', ')}`
              : `field '${issue.path.map(String).join('.')}' ${issue.message}`;
          ctx.addIssue({ code: 'custom', message });
          return z.NEVER;
        }),
    ),
};
