import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for secrets at rest (client provider keys). Keys are derived from SECRET_KEY (and
 * SECRET_KEY_PREVIOUS while rotating) with HKDF under a fixed purpose label, so the same SECRET_KEY used
 * elsewhere never yields the same key bytes.
 *
 * Stored form `v2:<key id>:` + base64url(iv | tag | ciphertext). The additional authenticated data is
 * the row the secret belongs to plus the key id, so a ciphertext copied to another row (or altered, or
 * relabelled with another key id) fails to decrypt instead of being used. The key id (8 hex digits of
 * a hash of the derived key) says which configured key sealed it.
 * `v1:` + base64url(iv | tag | ciphertext) is the earlier form without AAD: still read, and re-sealed
 * as v2 at start-up and by `npm run admin -- rotate-secrets`.
 */
export interface SecretBox {
  /** Seals under the current key, bound to `owner` (e.g. `client:12`). */
  seal(plain: string, owner: string): string;
  /** Opens what `seal` produced for the same owner, with the current or the previous key. */
  open(sealed: string, owner: string): string;
  /** Whether the sealed value should be re-sealed: legacy form or not under the current key. */
  isStale(sealed: string): boolean;
  /** Id of the current key, as written in sealed values. */
  readonly keyId: string;
}

/** Why a stored secret could not be opened; the message names the owner and the reason, never the secret. */
export class SecretError extends Error {
  override readonly name = 'SecretError';
}

const PURPOSE = 'mtcs/provider-key/v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface DerivedKey {
  id: string;
  bytes: Buffer;
}

function derive(secretKey: string): DerivedKey {
  const bytes = Buffer.from(hkdfSync('sha256', Buffer.from(secretKey, 'utf8'), Buffer.alloc(0), PURPOSE, 32));
  return { bytes, id: createHash('sha256').update('mtcs/key-id').update(bytes).digest('hex').slice(0, 8) };
}

const aad = (owner: string, keyId: string) => Buffer.from(`${owner}|key:${keyId}`, 'utf8');

function decrypt(key: Buffer, raw: Buffer, additional: Buffer | undefined): string {
  if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('too short');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  if (additional) decipher.setAAD(additional);
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

export function createSecretBox(secretKey: string, previousKey?: string): SecretBox {
  if (!secretKey) throw new Error('secret box needs a non-empty secret key');
  const current = derive(secretKey);
  const keys = [current, ...(previousKey && previousKey !== secretKey ? [derive(previousKey)] : [])];
  const configured = () => keys.map((k) => k.id).join(', ');

  return {
    keyId: current.id,
    seal(plain, owner) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current.bytes, iv);
      cipher.setAAD(aad(owner, current.id));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `v2:${current.id}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(sealed, owner) {
      const v2 = /^v2:([0-9a-f]{8}):([A-Za-z0-9_-]+)$/.exec(sealed);
      if (v2) {
        const key = keys.find((k) => k.id === v2[1]);
        if (!key) throw new SecretError(`the stored secret of ${owner} was sealed with key ${v2[1]}, which is neither SECRET_KEY nor SECRET_KEY_PREVIOUS (configured: ${configured()})`);
        try {
          return decrypt(key.bytes, Buffer.from(v2[2]!, 'base64url'), aad(owner, key.id));
        } catch {
          throw new SecretError(`the stored secret of ${owner} fails authentication: it was altered or belongs to another row`);
        }
      }
      if (sealed.startsWith('v1:')) {
        const raw = Buffer.from(sealed.slice(3), 'base64url');
        for (const key of keys) {
          try {
            return decrypt(key.bytes, raw, undefined);
          } catch {
            // Legacy values carry no key id: try the next configured key.
          }
        }
        throw new SecretError(`the stored secret of ${owner} (legacy form) cannot be decrypted with the configured keys (${configured()}): it was altered or sealed with another SECRET_KEY`);
      }
      throw new SecretError(`the stored secret of ${owner} is not in a known sealed form`);
    },
    isStale(sealed) {
      return !sealed.startsWith(`v2:${current.id}:`);
    },
  };
}

/** `sk-...abcd`: enough for an administrator to tell keys apart, useless to anyone else. */
export function maskSecret(secret: string): string {
  if (secret.length < 12) return '...';
  return `${secret.slice(0, 3)}...${secret.slice(-4)}`;
}
