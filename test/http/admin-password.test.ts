import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_ADMIN_EMAIL, ensureAdministrator } from '../../src/runtime.js';
import { CURRENT, createTestContext, form, type TestContext } from '../support/helper.js';

const contexts: TestContext[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(contexts.splice(0).map((ctx) => ctx.close()));
});

/** A start's administrator step over a fresh database; answers what it printed on the terminal. */
async function start(ctx: TestContext, config = ctx.config): Promise<string> {
  let printed = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    printed += String(chunk);
    return true;
  });
  await ensureAdministrator({ config, services: ctx.services, logger: pino({ level: 'silent' }) });
  vi.restoreAllMocks();
  return printed;
}

async function login(ctx: TestContext, email: string, password: string) {
  return (await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, ...form({ email, password }) })).envelope;
}

describe('the first administrator', () => {
  it('ADMIN_PASSWORD alone sets the password of admin@localhost, at every start, and prints none', async () => {
    const ctx = await createTestContext({ env: { ADMIN_PASSWORD: 'Chosen-Adm1n-pw' } });
    contexts.push(ctx);
    expect(ctx.config.adminEmail).toBeUndefined();
    expect(await start(ctx)).not.toContain('Created administrator');
    expect(await login(ctx, DEFAULT_ADMIN_EMAIL, 'Chosen-Adm1n-pw')).toMatchObject({ status: 0, data: [{ User_Role: 'admin', Name: 'Administrator' }] });

    // A later start with another ADMIN_PASSWORD: the administrator exists and gets that password.
    expect(await start(ctx, { ...ctx.config, adminPassword: 'Changed-Adm1n-pw' })).toBe('');
    expect(await login(ctx, DEFAULT_ADMIN_EMAIL, 'Chosen-Adm1n-pw')).toEqual({ status: 1, data: 'Invalid e-mail or password' });
    expect(await login(ctx, DEFAULT_ADMIN_EMAIL, 'Changed-Adm1n-pw')).toMatchObject({ status: 0, data: [{ User_Role: 'admin' }] });
  });

  it('without ADMIN_PASSWORD an empty database gets admin@localhost with a random password printed once', async () => {
    const ctx = await createTestContext();
    contexts.push(ctx);
    const printed = await start(ctx);
    const password = /Created administrator admin@localhost with password: (\S+)/.exec(printed)?.[1];
    expect(password).toBeDefined();
    expect(await login(ctx, DEFAULT_ADMIN_EMAIL, password!)).toMatchObject({ status: 0, data: [{ User_Role: 'admin' }] });
    // An administrator exists now: the next start prints nothing and keeps the password.
    expect(await start(ctx)).toBe('');
    expect(await login(ctx, DEFAULT_ADMIN_EMAIL, password!)).toMatchObject({ status: 0 });
  });

  it('ADMIN_EMAIL with ADMIN_PASSWORD sets that administrator, not admin@localhost', async () => {
    const ctx = await createTestContext({ env: { ADMIN_EMAIL: 'ops@example.com', ADMIN_PASSWORD: 'Chosen-Adm1n-pw' } });
    contexts.push(ctx);
    expect(await start(ctx)).toBe('');
    expect(await login(ctx, 'ops@example.com', 'Chosen-Adm1n-pw')).toMatchObject({ status: 0, data: [{ User_Role: 'admin' }] });
    expect(await login(ctx, DEFAULT_ADMIN_EMAIL, 'Chosen-Adm1n-pw')).toEqual({ status: 1, data: 'Invalid e-mail or password' });
  });
});
