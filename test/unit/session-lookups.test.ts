import { describe, expect, it } from 'vitest';
import { batchedLookup, MAX_LOOKUP_BATCH } from '../../src/domain/accounts/session-lookups.js';

interface Row {
  token_hash: string;
  user_id: number;
}

/** A lookup that records each statement's tokens and finds the tokens starting with "ok". */
function recording() {
  const statements: { hashes: string[]; now: Date }[] = [];
  const lookup = batchedLookup<Row>(async (hashes, now) => {
    statements.push({ hashes, now });
    return hashes.filter((h) => h.startsWith('ok')).map((h) => ({ token_hash: h, user_id: Number(h.slice(2)) }));
  });
  return { statements, lookup };
}

const at = (ms: number) => new Date(ms);

describe('session lookups arriving together', () => {
  it('go as one statement and each caller gets its own row, copies for one token', async () => {
    const { statements, lookup } = recording();
    const asked = ['ok1', 'nope', 'ok2', 'ok1', 'ok3'];
    const rows = await Promise.all(asked.map((h, i) => lookup.find(h, at(1000 + i), at(i))));
    expect(rows).toEqual([{ user_id: 1 }, undefined, { user_id: 2 }, { user_id: 1 }, { user_id: 3 }]);
    expect(rows[0]).not.toBe(rows[3]);
    expect(statements).toEqual([{ hashes: ['ok1', 'nope', 'ok2', 'ok3'], now: at(1000) }]);
  });

  it(`split into statements of ${MAX_LOOKUP_BATCH} tokens at most, and later turns go on their own`, async () => {
    const { statements, lookup } = recording();
    const hashes = Array.from({ length: MAX_LOOKUP_BATCH + 6 }, (_, i) => `ok${i}`);
    const rows = await Promise.all(hashes.map((h) => lookup.find(h, at(0), at(0))));
    expect(rows.map((r) => r?.user_id)).toEqual(hashes.map((_, i) => i));
    expect(statements.map((s) => s.hashes.length)).toEqual([MAX_LOOKUP_BATCH, 6]);
    expect(await lookup.find('ok7', at(5), at(0))).toEqual({ user_id: 7 });
    expect(statements.map((s) => s.hashes)).toHaveLength(3);
  });

  it("hand a failed statement's error to every caller in it", async () => {
    const lookup = batchedLookup<Row>(async () => {
      throw new Error('database busy');
    });
    const results = await Promise.allSettled([lookup.find('a', at(0), at(0)), lookup.find('b', at(0), at(0))]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'resolved'))).toEqual(['database busy', 'database busy']);
  });
});
