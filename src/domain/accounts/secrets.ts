import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

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
