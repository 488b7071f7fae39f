import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for secrets at rest (client provider keys). The key is derived from SECRET_KEY with HKDF
 * under a fixed purpose label, so the same SECRET_KEY used elsewhere never yields the same key bytes.
 * Stored form: `v1:` + base64url(iv | tag | ciphertext); the version prefix leaves room for rotation.
 */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

const PURPOSE = 'mtcs/provider-key/v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function createSecretBox(secretKey: string): SecretBox {
  if (!secretKey) throw new Error('secret box needs a non-empty secret key');
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(secretKey, 'utf8'), Buffer.alloc(0), PURPOSE, 32));
  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(sealed) {
      if (!sealed.startsWith('v1:')) throw new Error('unknown sealed secret format');
      const raw = Buffer.from(sealed.slice(3), 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    },
  };
}

/** `sk-...abcd`: enough for an administrator to tell keys apart, useless to anyone else. */
export function maskSecret(secret: string): string {
  if (secret.length < 12) return '...';
  return `${secret.slice(0, 3)}...${secret.slice(-4)}`;
}
