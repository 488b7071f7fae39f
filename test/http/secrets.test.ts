import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { runAdminCommand } from '../../src/cli/admin.js';
import { loadConfig } from '../../src/config.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { withDatabase } from '../support/global-setup.js';
import { CURRENT, form } from '../support/helper.js';
import { startStub } from '../support/openai-stub.js';

/**
 * Provider keys at rest (docs/interface-notes.md, Secrets at rest): bound to their row, rotatable, and a
 * start that refuses keys that cannot read what is stored. Each test runs real service starts (startRuntime,
 * as `npm start` does) on a fresh Postgres database, so it runs in the postgres project only
 * (TEST_DATABASE_URL): several cold PGlite starts per test took minutes on the shared machine, and the code
 * under test is the same.
 */
const onPostgres = process.env.TEST_DB_KIND === 'postgres';

const OLD_KEY = 'old-secret-key-0123456789abcdef-0123456789';
const NEW_KEY = 'new-secret-key-fedcba9876543210-9876543210';
const KEY_A = 'sk-test-client-a-0123456789abcdefWXYZ';
const KEY_B = 'sk-test-client-b-9876543210fedcbaQRST';
const TZ = 'Europe/Madrid';

let stub: ReturnType<typeof startStub>;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  stub = startStub();
  await stub.listen();
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await stub?.close();
});
beforeEach(() => {
  stub.state.mode = 'ok';
  stub.requests.length = 0;
});

/** Environment of one service installation: its own database, the stub as provider. */
async function installation(): Promise<Record<string, string>> {
  const dataDir = path.join(os.tmpdir(), `mtcs-secrets-${process.pid}-${randomBytes(4).toString('hex')}`);
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  let databaseUrl = '';
  if (onPostgres) {
    const url = process.env.TEST_DATABASE_URL!;
    const name = `mtcs_secrets_${process.pid}_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    databaseUrl = withDatabase(url, name);
    cleanups.push(async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    });
  }
  return { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LLM_BASE_URL: `${stub.url}/v1`, LLM_TIMEOUT_MS: '3000', LOG_LEVEL: 'silent', WORKERS: '0' };
}

interface Started {
  runtime: Runtime;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** Starts the service the way `npm start` does (config, migrations, secret check, app). */
async function start(env: Record<string, string>): Promise<Started> {
  const runtime = await startRuntime(loadConfig(env), pino({ level: 'silent' }));
  const app = await buildApp({ config: runtime.config, services: runtime.services, logger: pino({ level: 'silent' }) });
  await app.ready();
  return {
    runtime,
    app,
    async close() {
      await app.close();
      await runtime.close();
    },
  };
}

async function call(app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH', resource: string, fields: Record<string, string | number>) {
  const res = await app.inject({ method, url: `${CURRENT}/${resource}.php`, ...form({ tz: TZ, ...fields }) });
  return res.json<{ status: number; data: any }>();
}

/** A consumer with a client holding `providerKey`, a use case and a chat; answers what a sentence needs. */
async function clientWithChat(s: Started, name: string, providerKey: string) {
  const email = `${name}-${randomBytes(3).toString('hex')}@example.com`;
  await s.runtime.services.users.register({ name, lastname: 'Tester', email, password: 'Passw0rd!x', phone: '600000000' });
  const login = await call(s.app, 'POST', 'sessions', { email, password: 'Passw0rd!x' });
  const session = login.data[0].Hash as string;
  const userId = Number(login.data[0].User_Id);
  const client = await call(s.app, 'POST', 'client', { session, provider_key: providerKey });
  expect(client.status).toBe(0);
  const usecase = await call(s.app, 'POST', 'usecase', { session, client_id: client.data, data: JSON.stringify({ Description: `${name} support` }) });
  const chat = await call(s.app, 'POST', 'chat', { session, usca_id: usecase.data, user_id: userId });
  expect(chat.status).toBe(0);
  return { session, clientId: client.data as number, chatId: chat.data as number };
}

/** A user sentence in an automatic chat: the provider is called with the client's key. */
async function say(s: Started, who: { session: string; chatId: number }, text = 'Hello?') {
  return call(s.app, 'POST', 'sentence', { session: who.session, chat_id: who.chatId, text, role: 1 });
}

const sealedOf = async (s: Started, clientId: number) =>
  (await s.runtime.database.db.selectFrom('clients').select('provider_key_enc').where('id', '=', clientId).executeTakeFirstOrThrow()).provider_key_enc!;
const setSealed = (s: Started, clientId: number, value: string) =>
  s.runtime.database.db.updateTable('clients').set({ provider_key_enc: value }).where('id', '=', clientId).execute();

/** The form written before keys were bound to their row: `v1:` + AES-GCM without additional data. */
function legacySeal(secretKey: string, plain: string): string {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(secretKey, 'utf8'), Buffer.alloc(0), 'mtcs/provider-key/v1', 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

async function expectStartRefused(env: Record<string, string>, reason: RegExp) {
  const failure = await start(env).then(
    async (s) => {
      await s.close();
      return undefined;
    },
    (error: unknown) => error as Error,
  );
  expect(failure, 'the start should have been refused').toBeInstanceOf(Error);
  expect(failure!.message).toMatch(/^Cannot start: SECRET_KEY cannot decrypt the stored provider keys: /);
  expect(failure!.message).toMatch(reason);
  expect(failure!.message).not.toContain('\n');
  expect(failure!.message).not.toContain(KEY_A);
}

describe.skipIf(!onPostgres)('provider keys bound to their row', () => {
  it('refuses a swapped or altered ciphertext with a clear error, never sending it, and a start with it stored fails', { timeout: 240_000 }, async () => {
    const env = { ...(await installation()), SECRET_KEY: OLD_KEY };
    const s = await start(env);
    try {
      const alice = await clientWithChat(s, 'alice', KEY_A);
      const bob = await clientWithChat(s, 'bob', KEY_B);
      expect((await say(s, alice)).status).toBe(0);
      expect(stub.requests.map((r) => r.authorization)).toEqual([`Bearer ${KEY_A}`]);

      // Someone with write access to the clients table swaps the two ciphertexts.
      const [a, b] = [await sealedOf(s, alice.clientId), await sealedOf(s, bob.clientId)];
      await setSealed(s, alice.clientId, b);
      await setSealed(s, bob.clientId, a);
      for (const who of [alice, bob]) {
        const refused = await say(s, who, 'Anyone there?');
        expect(refused.status).toBe(1);
        expect(refused.data).toBe(
          `The provider key of client ${who.clientId} cannot be used: the stored secret of client:${who.clientId} fails authentication: it was altered or belongs to another row; set it again with PATCH /client.php`,
        );
      }
      // Altered in place: one character of the ciphertext changed.
      const altered = `${a.slice(0, -3)}${a.at(-3) === 'A' ? 'B' : 'A'}${a.slice(-2)}`;
      await setSealed(s, alice.clientId, altered);
      expect((await say(s, alice)).data).toMatch(/fails authentication: it was altered or belongs to another row/);
      expect(stub.requests).toHaveLength(1);
    } finally {
      await s.close();
    }
    await expectStartRefused(env, /fails authentication: it was altered or belongs to another row \(and 1 more\)/);
  });
});

describe.skipIf(!onPostgres)('key rotation', () => {
  it('reads legacy and old-key secrets, re-seals them with the admin command, and then runs with only the new key', { timeout: 240_000 }, async () => {
    const base = await installation();
    let s = await start({ ...base, SECRET_KEY: OLD_KEY });
    let alice;
    let bob;
    try {
      alice = await clientWithChat(s, 'alice', KEY_A);
      bob = await clientWithChat(s, 'bob', KEY_B);
      // Bob's key in the older form (no row binding): still read.
      await setSealed(s, bob.clientId, legacySeal(OLD_KEY, KEY_B));
      expect((await say(s, bob)).status).toBe(0);
      expect(stub.requests.at(-1)?.authorization).toBe(`Bearer ${KEY_B}`);
    } finally {
      await s.close();
    }

    // A restart re-seals the legacy value with its row binding (still under the old key).
    s = await start({ ...base, SECRET_KEY: OLD_KEY });
    try {
      expect(await sealedOf(s, bob.clientId)).toMatch(/^v2:[0-9a-f]{8}:/);
    } finally {
      await s.close();
    }

    // Rotation: new key, old one accepted for reading, re-seal everything.
    let out = '';
    let err = '';
    const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t) };
    const rotating = { ...base, SECRET_KEY: NEW_KEY, SECRET_KEY_PREVIOUS: OLD_KEY };
    expect(await runAdminCommand(['rotate-secrets'], io, rotating), err).toBe(0);
    expect(out).toBe('Re-sealed 2 of 2 stored provider keys under the current key; SECRET_KEY_PREVIOUS is no longer needed\n');
    out = '';
    expect(await runAdminCommand(['rotate-secrets'], io, rotating)).toBe(0);
    expect(out).toMatch(/^Re-sealed 0 of 2 /);

    // Restart with only the new key: chat still works with each client's own key.
    s = await start({ ...base, SECRET_KEY: NEW_KEY });
    try {
      stub.requests.length = 0;
      expect((await say(s, alice)).status).toBe(0);
      expect((await say(s, bob)).status).toBe(0);
      expect(stub.requests.map((r) => r.authorization)).toEqual([`Bearer ${KEY_A}`, `Bearer ${KEY_B}`]);
      const newId = (await sealedOf(s, alice.clientId)).split(':')[1];
      expect(await sealedOf(s, bob.clientId)).toMatch(new RegExp(`^v2:${newId}:`));
    } finally {
      await s.close();
    }

    // The old key alone can no longer read what is stored: the start says so in one line.
    await expectStartRefused({ ...base, SECRET_KEY: OLD_KEY }, /sealed with key [0-9a-f]{8}, which is neither SECRET_KEY nor SECRET_KEY_PREVIOUS/);
  });
});
