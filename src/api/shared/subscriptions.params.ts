import { z } from 'zod';
import { p } from '../../http/params.js';

/** Parameters of applications and subscriptions (4.2); the older version drops `tz` and `user` where noted. */
export const subscriptionStatus = z.enum(['subscribed', 'unsubscribed'], { error: "must be 'subscribed' or 'unsubscribed'" });

export const listSubscriptionsParams = z.object({
  tz: p.tz(),
  search: p.string(200).optional(),
  status: subscriptionStatus.optional(),
});

/** Older version: no `tz` (dates come out in UTC unless one is given anyway). */
export const olderListSubscriptionsParams = listSubscriptionsParams.extend({ tz: p.tz().default('UTC') });

export const subscribeParams = z.object({ app: p.string(100) });

export const unsubscribeParams = z.object({ app: p.string(100), user: p.id().optional() });

/** What `params` of PATCH /subscriptions may carry: the application (which subscription) and the new plan. */
const PATCH_KEYS: Record<string, 'app' | 'plan'> = { app: 'app', plan: 'plan', planid: 'plan', plan_id: 'plan' };

export interface SubscriptionPatch {
  app?: string;
  plan?: string;
}

/**
 * `params` is `key=value` pairs separated by `&`, `,` or `;` (e.g. `app=forecast,plan=premium`), or a
 * JSON object with the same keys; legacy front ends build either.
 */
export function parseSubscriptionPatch(raw: unknown, ctx: z.RefinementCtx): SubscriptionPatch {
  const fail = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  let entries: [string, unknown][];
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    entries = Object.entries(raw);
  } else if (typeof raw === 'string' && raw.trim().startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return fail('is not a valid JSON object');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return fail('must be a JSON object');
    entries = Object.entries(parsed);
  } else if (typeof raw === 'string') {
    entries = [];
    for (const pair of raw.split(/[&,;]/)) {
      if (pair.trim() === '') continue;
      const eq = pair.indexOf('=');
      if (eq < 0) return fail(`'${pair.trim()}' is not a key=value pair (e.g. plan=premium)`);
      entries.push([pair.slice(0, eq), pair.slice(eq + 1)]);
    }
  } else {
    return fail('must be a string such as app=forecast,plan=premium');
  }
  const patch: SubscriptionPatch = {};
  for (const [rawKey, rawValue] of entries) {
    const lower = rawKey.trim().toLowerCase();
    const key = Object.hasOwn(PATCH_KEYS, lower) ? PATCH_KEYS[lower] : undefined;
    if (!key) {
      return fail(`unknown key '${rawKey.trim()}' (updatable: plan; app names the subscription)`);
    }
    if (typeof rawValue !== 'string' && typeof rawValue !== 'number') return fail(`'${key}' must be a text value`);
    const value = String(rawValue).trim();
    if (value === '' || value.length > 100) return fail(`'${key}' must be 1 to 100 characters`);
    patch[key] = value;
  }
  if (Object.keys(patch).length === 0) return fail('is empty');
  return patch;
}

export const patchSubscriptionParams = z.object({
  params: z.unknown().transform(parseSubscriptionPatch),
  /** Also accepted beside `params`, as other subscription calls send it. */
  app: p.string(100).optional(),
  user: p.id().optional(),
});
