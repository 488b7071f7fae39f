import type { ColumnDef, ColumnWhitelist } from './types.js';

export type Resolved =
  | { ok: true; key: string; def: ColumnDef }
  | { ok: false; candidates: string[] };

/**
 * Exact wire name first, then a unique case-insensitive match. Object.hasOwn keeps inherited names
 * ('constructor', '__proto__') from ever resolving.
 */
export function resolveColumn(whitelist: ColumnWhitelist, name: string): Resolved {
  if (Object.hasOwn(whitelist, name)) {
    const def = whitelist[name];
    if (def) return { ok: true, key: name, def };
  }
  const lower = name.toLowerCase();
  const candidates = Object.keys(whitelist).filter((key) => key.toLowerCase() === lower);
  const only = candidates.length === 1 ? candidates[0] : undefined;
  const def = only === undefined ? undefined : whitelist[only];
  return only !== undefined && def ? { ok: true, key: only, def } : { ok: false, candidates };
}
