import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import pLimit from 'p-limit';
import { Errors } from '../errors.js';

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
}

/**
 * scrypt with its parameters stored in the hash (`scrypt$N$r$p$salt$key`), so the cost can rise later
 * and tests can use a cheap cost while verifying stays correct for every stored hash.
 */
export function createScryptHasher(log2N = 17): PasswordHasher {
  const N = 2 ** log2N;
  const r = 8;
  const p = 1;
  return {
    async hash(password) {
      const salt = randomBytes(16);
      const key = await scrypt(password, salt, 32, { N, r, p, maxmem: 256 * N * r });
      return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
    },
    async verify(password, stored) {
      const parts = stored.split('$');
      if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
      const [n, rr, pp] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
      const salt = Buffer.from(parts[4]!, 'base64url');
      const expected = Buffer.from(parts[5]!, 'base64url');
      const key = await scrypt(password, salt, expected.length, { N: n, r: rr, p: pp, maxmem: 256 * n * rr });
      return timingSafeEqual(key, expected);
    },
  };
}

/** 256-bit random token, URL-safe; only its hash is stored. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * At most `concurrency` hashes at once (each scrypt holds ~128 MB for ~1 s) and at most `queue` waiting;
 * past that, refuse at once with `rate_limited` and a retry time instead of queueing memory. The retry
 * time is the queue ahead of the caller at the recent hash duration.
 */
export function createBoundedHasher(inner: PasswordHasher, bound: { concurrency: number; queue: number }): PasswordHasher {
  const limit = pLimit(bound.concurrency);
  let averageMs = 1000;
  const run = <T>(work: () => Promise<T>): Promise<T> => {
    const ahead = limit.activeCount + limit.pendingCount;
    if (ahead >= bound.concurrency + bound.queue) {
      return Promise.reject(Errors.rateLimited(Math.max(1, Math.ceil((ahead / bound.concurrency) * (averageMs / 1000)))));
    }
    return limit(async () => {
      const started = performance.now();
      try {
        return await work();
      } finally {
        averageMs = 0.8 * averageMs + 0.2 * (performance.now() - started);
      }
    });
  };
  return {
    hash: (password) => run(() => inner.hash(password)),
    verify: (password, stored) => run(() => inner.verify(password, stored)),
  };
}
