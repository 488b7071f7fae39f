/**
 * Session lookups that arrive together go to Postgres as one statement (docs/benchmarks.md, sessions). Every
 * authenticated call starts with one; under load, dozens arrive within one turn of the event loop, and each
 * sent alone costs a write and a read on a pooled connection (the system calls dominated the session check's
 * profile on real Postgres) plus a round of the server's executor. Waiting until the turn ends (setImmediate)
 * and asking for all their tokens at once (`token_hash = any($2)`) costs a lone request nothing measurable
 * and takes a busy service above its one-query-per-request floor (docs/benchmarks.md, sessions).
 *
 * A batch's times are its first request's: the others came within the same turn, so a session expiring in
 * between is one that expires that same millisecond. Requests for one token share its row (copies).
 */
export interface BatchedLookup<Row> {
  /** Resolves to the row of this token hash, or undefined when no active session has it. */
  find(tokenHash: string, now: Date, touchBefore: Date): Promise<Row | undefined>;
}

/** Tokens per statement at most: a batch larger than this goes as several statements. */
export const MAX_LOOKUP_BATCH = 64;

interface Waiter<Row> {
  resolve: (row: Row | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * `run(tokenHashes, now, touchBefore)` runs the lookup of several tokens in one statement and answers the
 * rows with their `token_hash`.
 */
export function batchedLookup<Row extends { token_hash: string }>(
  run: (tokenHashes: string[], now: Date, touchBefore: Date) => Promise<Row[]>,
): BatchedLookup<Omit<Row, 'token_hash'>> {
  let pending = new Map<string, Waiter<Omit<Row, 'token_hash'>>[]>();
  let times: { now: Date; touchBefore: Date } | undefined;

  function send(hashes: string[], waiting: Map<string, Waiter<Omit<Row, 'token_hash'>>[]>, now: Date, touchBefore: Date) {
    run(hashes, now, touchBefore).then(
      (rows) => {
        const found = new Map(rows.map((row) => [row.token_hash, row]));
        for (const hash of hashes) {
          const row = found.get(hash);
          for (const waiter of waiting.get(hash) ?? []) {
            if (!row) {
              waiter.resolve(undefined);
              continue;
            }
            const { token_hash: _, ...rest } = row;
            waiter.resolve(rest);
          }
        }
      },
      (error: unknown) => {
        for (const hash of hashes) for (const waiter of waiting.get(hash) ?? []) waiter.reject(error);
      },
    );
  }

  function flush() {
    const waiting = pending;
    const at = times as { now: Date; touchBefore: Date };
    pending = new Map();
    times = undefined;
    const hashes = [...waiting.keys()];
    for (let i = 0; i < hashes.length; i += MAX_LOOKUP_BATCH) send(hashes.slice(i, i + MAX_LOOKUP_BATCH), waiting, at.now, at.touchBefore);
  }

  return {
    find(tokenHash, now, touchBefore) {
      return new Promise((resolve, reject) => {
        if (!times) {
          times = { now, touchBefore };
          setImmediate(flush);
        }
        const waiters = pending.get(tokenHash);
        if (waiters) waiters.push({ resolve, reject });
        else pending.set(tokenHash, [{ resolve, reject }]);
      });
    },
  };
}
