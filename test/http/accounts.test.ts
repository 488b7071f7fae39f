import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT, OLDER, createTestContext, form, multipart, type TestContext } from '../support/helper.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

describe('sessions (current version)', () => {
  it('logs in with multipart form data and answers role, name, client id, user id and hash', async () => {
    const user = await ctx.createUser({ name: 'Ana' });
    const res = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, ...multipart({ email: user.email, password: user.password }) });
    expect(res.statusCode).toBe(200);
    expect(res.envelope.status).toBe(0);
    const [row] = res.envelope.data;
    expect(row).toMatchObject({ User_Role: 'consumer', Name: 'Ana', Client_Id: null, User_Id: String(user.id) });
    expect(row.Hash).toMatch(/^[\w-]{43}$/);
    expect(res.headers['set-cookie']).toContain('session=');
  });

  it('refuses a wrong password and a missing parameter with HTTP 200 error envelopes', async () => {
    const user = await ctx.createUser();
    const wrong = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, ...form({ email: user.email, password: 'nope' }) });
    expect(wrong.statusCode).toBe(200);
    expect(wrong.envelope).toEqual({ status: 1, data: 'Invalid e-mail or password' });
    const missing = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, ...form({ email: user.email }) });
    expect(missing.envelope).toEqual({ status: 1, data: "Missing required parameter 'password'" });
  });

  it('checks a session given as query, cookie or bearer token', async () => {
    const user = await ctx.createUser({ name: 'Bea' });
    const expected = { status: 0, data: { hash: user.session, user: { role: 'consumer', name: 'Bea' } } };
    expect((await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${user.session}` })).envelope).toEqual(expected);
    expect((await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php`, cookies: { session: user.session } })).envelope).toEqual(expected);
    expect(
      (await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php`, headers: { authorization: `Bearer ${user.session}` } })).envelope,
    ).toEqual(expected);
    const unknown = await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=nope` });
    expect(unknown.envelope).toEqual({ status: 1, data: 'Invalid or expired session' });
    const none = await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php` });
    expect(none.envelope).toEqual({ status: 1, data: "Missing required parameter 'session'" });
  });

  it('answers checks of many sessions arriving together each with its own caller', async () => {
    const users = await Promise.all(['Ann', 'Ben', 'Cy', 'Dee'].map((name, i) => ctx.createUser({ name, role: i === 0 ? 'admin' : 'consumer' })));
    const [, , ended, disabled] = users as [unknown, unknown, (typeof users)[number], (typeof users)[number]];
    await ctx.request({ method: 'DELETE', url: `${CURRENT}/session.php`, ...form({ session: ended.session, user_id: ended.id }) });
    const admin = await ctx.createUser({ role: 'admin' });
    expect((await ctx.request({ method: 'PATCH', url: `${CURRENT}/users.php?session=${admin.session}`, ...form({ user_id: disabled.id, enabled: 0 }) })).envelope.status).toBe(0);
    const asked = [...users.map((u) => u.session), 'unknown-token', (users[0] as { session: string }).session, (users[1] as { session: string }).session];
    const replies = await Promise.all(asked.map((session) => ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${session}` })));
    const invalid = { status: 1, data: 'Invalid or expired session' };
    const ok = (i: number, role: string, name: string) => ({ status: 0, data: { hash: asked[i], user: { role, name } } });
    expect(replies.map((r) => r.envelope)).toEqual([ok(0, 'admin', 'Ann'), ok(1, 'consumer', 'Ben'), invalid, invalid, invalid, ok(5, 'admin', 'Ann'), ok(6, 'consumer', 'Ben')]);
  });

  it('expires a session after SESSION_TTL of inactivity', async () => {
    const user = await ctx.createUser();
    ctx.clock.advance((ctx.config.sessionTtlSeconds + 1) * 1000);
    try {
      const res = await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${user.session}` });
      expect(res.envelope).toEqual({ status: 1, data: 'Invalid or expired session' });
    } finally {
      ctx.clock.advance(-(ctx.config.sessionTtlSeconds + 1) * 1000);
    }
  });

  it('slides the expiry while the session is used', async () => {
    const user = await ctx.createUser();
    const step = (ctx.config.sessionTtlSeconds * 1000 * 2) / 3;
    let moved = 0;
    try {
      for (let i = 0; i < 3; i++) {
        ctx.clock.advance(step);
        moved += step;
        const res = await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${user.session}` });
        expect(res.envelope.status).toBe(0);
      }
    } finally {
      ctx.clock.advance(-moved);
    }
  });

  it('logs out with DELETE /session.php (body) and the session stops working', async () => {
    const user = await ctx.createUser();
    const wrongUser = await ctx.request({ method: 'DELETE', url: `${CURRENT}/session.php`, ...form({ session: user.session, user_id: user.id + 999 }) });
    expect(wrongUser.envelope.status).toBe(1);
    expect(wrongUser.envelope.data).toContain("'user_id'");
    const res = await ctx.request({ method: 'DELETE', url: `${CURRENT}/session.php`, ...form({ session: user.session, user_id: user.id }) });
    expect(res.envelope).toEqual({ status: 0, data: 'success' });
    const check = await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${user.session}` });
    expect(check.envelope.status).toBe(1);
  });
});

describe('sessions (older version)', () => {
  it('logs in answering [{User_Id, Hash}], checks answering the token, logs out with query params', async () => {
    const user = await ctx.createUser();
    const login = await ctx.request({ method: 'POST', url: `${OLDER}/sessions.php`, ...form({ email: user.email, password: user.password }) });
    expect(login.envelope.status).toBe(0);
    expect(Object.keys(login.envelope.data[0]).sort()).toEqual(['Hash', 'User_Id']);
    const token = login.envelope.data[0].Hash;
    expect((await ctx.request({ method: 'GET', url: `${OLDER}/sessions.php?session=${token}` })).envelope).toEqual({ status: 0, data: token });
    // The older segment is also answered under /api/.
    expect((await ctx.request({ method: 'GET', url: `/api${OLDER}/sessions.php?session=${token}` })).envelope).toEqual({ status: 0, data: token });
    const out = await ctx.request({ method: 'DELETE', url: `${OLDER}/session.php?user_id=${user.id}&session=${token}` });
    expect(out.envelope).toEqual({ status: 0, data: 'success' });
    expect((await ctx.request({ method: 'GET', url: `${OLDER}/sessions.php?session=${token}` })).envelope.status).toBe(1);
  });
});

describe('envelope and routing', () => {
  it('answers an unknown resource with HTTP 404 and the envelope', async () => {
    const res = await ctx.request({ method: 'GET', url: `${CURRENT}/nothing.php` });
    expect(res.statusCode).toBe(404);
    expect(res.envelope.status).toBe(1);
  });

  it('turns malformed JSON into an error envelope, not a 400', async () => {
    const res = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, payload: '{"email": ', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(200);
    expect(res.envelope.status).toBe(1);
  });

  it('refuses to register a versioned route that declares no auth scope', async () => {
    const { buildApp } = await import('../../src/app.js');
    const app = await buildApp({ config: ctx.config, services: ctx.services });
    await expect(
      app.register(async (scope) => {
        scope.get('/undeclared.php', async () => 'x');
      }, { prefix: '/api/202203010900' }),
    ).rejects.toThrow('declares no auth scope');
    await app.close().catch(() => undefined);
  });

  it('answers CORS preflight for PUT, PATCH and DELETE', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const res = await ctx.app.inject({
        method: 'OPTIONS',
        url: `${CURRENT}/users.php`,
        headers: { origin: 'http://front.example', 'access-control-request-method': method },
      });
      expect(res.statusCode).toBeLessThan(300);
      expect(res.headers['access-control-allow-methods']).toContain(method);
      expect(res.headers['access-control-allow-origin']).toBe('*');
    }
  });

  it('serves the OpenAPI document generated from the route schemas', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/docs/json' });
    const doc = res.json();
    expect(doc.paths[`${CURRENT}/sessions.php`].post.requestBody).toBeDefined();
    expect(doc.paths[`${CURRENT}/users.php`].get.parameters.map((p: { name: string }) => p.name)).toContain('search');
  });

  it('never writes passwords or session values to the log', async () => {
    const user = await ctx.createUser({ password: 'Very$ecret-Pass1' });
    await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${user.session}` });
    const logs = ctx.logLines.join('\n');
    expect(logs).toContain('/sessions.php');
    expect(logs).not.toContain(user.session);
    expect(logs).not.toContain('Very$ecret-Pass1');
  });
});

describe('password recovery and change', () => {
  it('sends a real recovery e-mail whose single-use token resets the password', async () => {
    const user = await ctx.createUser({ name: 'Rita' });
    const before = ctx.mail.messages.length;
    const res = await ctx.request({ method: 'POST', url: `${CURRENT}/passwords.php`, ...form({ email: user.email }) });
    expect(res.envelope).toEqual({ status: 0, data: 'success' });
    const mail = await ctx.mail.waitFor(user.email, before);
    expect(mail.subject).toBe('Password recovery');
    expect(mail.text).toContain('http://front.example/reset-password?token=');
    const token = /token=([\w-]+)/.exec(mail.text)![1]!;

    const mismatch = await ctx.request({
      method: 'PUT',
      url: `${CURRENT}/passwords.php`,
      ...form({ token, new_password: 'NewPassw0rd', new_password_repeat: 'Other0ne!' }),
    });
    expect(mismatch.envelope).toEqual({ status: 1, data: "Invalid parameter 'new_password_repeat': does not match new_password" });
    const weak = await ctx.request({ method: 'PUT', url: `${CURRENT}/passwords.php`, ...form({ token, new_password: 'short', new_password_repeat: 'short' }) });
    expect(weak.envelope.status).toBe(1);
    expect(weak.envelope.data).toContain("'new_password'");

    const afterCount = ctx.mail.messages.length;
    const ok = await ctx.request({
      method: 'PUT',
      url: `${CURRENT}/passwords.php`,
      ...form({ token, new_password: 'NewPassw0rd', new_password_repeat: 'NewPassw0rd' }),
    });
    expect(ok.envelope).toEqual({ status: 0, data: 'success' });
    expect((await ctx.mail.waitFor(user.email, afterCount)).subject).toBe('Your password was changed');
    // The old session ended, the new password works, the old one does not.
    expect((await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${user.session}` })).envelope.status).toBe(1);
    await expect(ctx.login(user.email, 'NewPassw0rd')).resolves.toMatch(/[\w-]{43}/);
    await expect(ctx.login(user.email, user.password)).rejects.toThrow();

    const reuse = await ctx.request({
      method: 'PUT',
      url: `${CURRENT}/passwords.php`,
      ...form({ token, new_password: 'Again-Passw0rd', new_password_repeat: 'Again-Passw0rd' }),
    });
    expect(reuse.envelope).toEqual({ status: 1, data: "Invalid parameter 'token': unknown, expired or already used" });
  });

  it('refuses an expired recovery token', async () => {
    const user = await ctx.createUser();
    const before = ctx.mail.messages.length;
    await ctx.request({ method: 'POST', url: `${OLDER}/passwords.php`, ...form({ email: user.email }) });
    const token = /token=([\w-]+)/.exec((await ctx.mail.waitFor(user.email, before)).text)![1]!;
    ctx.clock.advance(61 * 60 * 1000);
    try {
      const res = await ctx.request({
        method: 'PUT',
        url: `${OLDER}/passwords.php`,
        ...form({ token, new_password: 'NewPassw0rd', new_password_repeat: 'NewPassw0rd' }),
      });
      expect(res.envelope.status).toBe(1);
    } finally {
      ctx.clock.advance(-61 * 60 * 1000);
    }
  });

  it('answers the same for an unknown e-mail and sends nothing', async () => {
    const before = ctx.mail.messages.length;
    const res = await ctx.request({ method: 'POST', url: `${CURRENT}/passwords.php`, ...form({ email: 'nobody@example.com' }) });
    expect(res.envelope).toEqual({ status: 0, data: 'success' });
    await new Promise((r) => setTimeout(r, 200));
    expect(ctx.mail.messages.slice(before).some((m) => m.to === 'nobody@example.com')).toBe(false);
  });

  it('changes the password with a session and current_password, keeping that session', async () => {
    const user = await ctx.createUser();
    const other = await ctx.login(user.email, user.password);
    const wrong = await ctx.request({
      method: 'PUT',
      url: `${CURRENT}/passwords.php?session=${user.session}`,
      ...form({ current_password: 'wrong', new_password: 'Changed-Pass1', new_password_repeat: 'Changed-Pass1' }),
    });
    expect(wrong.envelope).toEqual({ status: 1, data: "Invalid parameter 'current_password': is not correct" });
    const missing = await ctx.request({
      method: 'PUT',
      url: `${CURRENT}/passwords.php?session=${user.session}`,
      ...form({ new_password: 'Changed-Pass1', new_password_repeat: 'Changed-Pass1' }),
    });
    expect(missing.envelope).toEqual({ status: 1, data: "Missing required parameter 'current_password'" });
    const res = await ctx.request({
      method: 'PUT',
      url: `${CURRENT}/passwords.php?session=${user.session}`,
      ...form({ current_password: user.password, new_password: 'Changed-Pass1', new_password_repeat: 'Changed-Pass1' }),
    });
    expect(res.envelope).toEqual({ status: 0, data: 'success' });
    expect((await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${user.session}` })).envelope.status).toBe(0);
    expect((await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${other}` })).envelope.status).toBe(1);
  });

  it('requires a token when no session is given', async () => {
    const res = await ctx.request({ method: 'PUT', url: `${CURRENT}/passwords.php`, ...form({ new_password: 'Changed-Pass1', new_password_repeat: 'Changed-Pass1' }) });
    expect(res.envelope).toEqual({ status: 1, data: "Missing required parameter 'token'" });
  });
});

describe('users', () => {
  it('registers a consumer and refuses a duplicate e-mail (any case) and a bad e-mail', async () => {
    const fields = { name: 'Carl', lastname: 'Stone', email: 'carl@example.com', password: 'Str0ng-pass', phonenumber: '123' };
    expect((await ctx.request({ method: 'POST', url: `${CURRENT}/users.php`, ...form(fields) })).envelope).toEqual({ status: 0, data: 'success' });
    const dup = await ctx.request({ method: 'POST', url: `${OLDER}/users.php`, ...form({ ...fields, email: 'CARL@example.com' }) });
    expect(dup.envelope).toEqual({ status: 1, data: 'A user with e-mail CARL@example.com already exists' });
    const bad = await ctx.request({ method: 'POST', url: `${CURRENT}/users.php`, ...form({ ...fields, email: 'not-an-email' }) });
    expect(bad.envelope).toEqual({ status: 1, data: "Invalid parameter 'email': must be an e-mail address" });
    const missing = await ctx.request({ method: 'POST', url: `${CURRENT}/users.php`, ...form({ name: 'x' }) });
    expect(missing.envelope.data).toMatch(/^Missing required parameter/);
  });

  it('lets a consumer read and patch only itself, never its role or enabled flag', async () => {
    const a = await ctx.createUser({ name: 'A' });
    const b = await ctx.createUser({ name: 'B' });
    const list = await ctx.request({ method: 'GET', url: `${CURRENT}/users.php?session=${a.session}&search=B` });
    expect(list.envelope.data).toEqual([
      { id: String(a.id), email: a.email, name: 'A', lastname: 'Tester', phone: '600000000', role: 'consumer', is_enabled: '1' },
    ]);
    const self = await ctx.request({ method: 'PATCH', url: `${CURRENT}/users.php?session=${a.session}`, ...form({ name: 'Alice', phone: '999' }) });
    expect(self.envelope).toEqual({ status: 0, data: 'success' });
    const other = await ctx.request({ method: 'PATCH', url: `${CURRENT}/users.php?session=${a.session}`, ...form({ user_id: b.id, name: 'Hacked' }) });
    expect(other.envelope.status).toBe(1);
    const role = await ctx.request({ method: 'PATCH', url: `${CURRENT}/users.php?session=${a.session}`, ...form({ role: 'admin' }) });
    expect(role.envelope).toEqual({ status: 1, data: "Forbidden: you cannot change your own 'role'" });
    const enabled = await ctx.request({ method: 'PATCH', url: `${CURRENT}/users.php?session=${a.session}`, ...form({ enabled: 0 }) });
    expect(enabled.envelope.status).toBe(1);
    const after = await ctx.services.users.findByEmail(b.email);
    expect(after?.name).toBe('B');
    expect((await ctx.services.users.findByEmail(a.email))?.role).toBe('consumer');
  });

  it('lets an administrator search everyone, patch roles, and disable a user whose sessions then stop', async () => {
    const admin = await ctx.createUser({ role: 'admin' });
    const target = await ctx.createUser({ name: 'Target-Zed' });
    const found = await ctx.request({ method: 'GET', url: `${CURRENT}/users.php?session=${admin.session}&search=Target-Zed&role=consumer&enabled=1` });
    expect(found.envelope.data.map((u: { id: string }) => u.id)).toEqual([String(target.id)]);
    const needsId = await ctx.request({ method: 'PATCH', url: `${CURRENT}/users.php?session=${admin.session}`, ...form({ enabled: 0 }) });
    expect(needsId.envelope).toEqual({ status: 1, data: "Missing required parameter 'user_id'" });
    const disable = await ctx.request({ method: 'PATCH', url: `${CURRENT}/users.php?session=${admin.session}`, ...form({ user_id: target.id, enabled: 0 }) });
    expect(disable.envelope).toEqual({ status: 0, data: 'success' });
    expect((await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${target.session}` })).envelope).toEqual({ status: 1, data: 'Invalid or expired session' });
    const login = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, ...form({ email: target.email, password: target.password }) });
    expect(login.envelope).toEqual({ status: 1, data: 'This user is disabled' });
    const disabled = await ctx.request({ method: 'GET', url: `${CURRENT}/users.php?session=${admin.session}&enabled=0` });
    expect(disabled.envelope.data.map((u: { id: string }) => u.id)).toContain(String(target.id));
    const missing = await ctx.request({ method: 'PATCH', url: `${CURRENT}/users.php?session=${admin.session}`, ...form({ user_id: 999999, name: 'x' }) });
    expect(missing.envelope).toEqual({ status: 1, data: 'User 999999 not found' });
  });

  it.each([CURRENT, OLDER])("reads an administrator's own e-mail as identification and any other e-mail as a filter (%s)", async (base) => {
    const admin = await ctx.createUser({ role: 'admin', email: `Boss-${base.length}-${Date.now()}@example.com` });
    const name = `Listed-${base.length}`;
    const other = await ctx.createUser({ name });
    const list = async (query: string) => {
      const res = await ctx.request({ method: 'GET', url: `${base}/users.php?session=${admin.session}&${query}` });
      expect(res.envelope.status).toBe(0);
      return (res.envelope.data as { id: string }[]).map((u) => u.id);
    };
    // The legacy admin screen sends its own e-mail (any case): the whole list comes back.
    const all = await list(`email=${encodeURIComponent(admin.email.toUpperCase())}`);
    expect(all).toEqual(expect.arrayContaining([String(admin.id), String(other.id)]));
    // Another e-mail is an exact filter.
    expect(await list(`email=${encodeURIComponent(other.email)}`)).toEqual([String(other.id)]);
    // search / role / enabled still narrow the list alongside the own e-mail.
    expect(await list(`email=${encodeURIComponent(admin.email)}&search=${name}&role=consumer&enabled=1`)).toEqual([String(other.id)]);
    expect(await list(`email=${encodeURIComponent(admin.email)}&role=admin`)).toContain(String(admin.id));
    expect(await list(`email=${encodeURIComponent(admin.email)}&role=admin`)).not.toContain(String(other.id));
    // A consumer sending someone else's e-mail still gets only itself.
    const res = await ctx.request({ method: 'GET', url: `${base}/users.php?session=${other.session}&email=${encodeURIComponent(admin.email)}` });
    expect(res.envelope.data.map((u: { id: string }) => u.id)).toEqual([String(other.id)]);
  });
});

describe('summaries', () => {
  it('gives administrators users counts without applications, consumers the reverse, older without users', async () => {
    const admin = await ctx.createUser({ role: 'admin', name: 'Boss' });
    const consumer = await ctx.createUser({ name: 'Cora' });
    const a = await ctx.request({ method: 'GET', url: `${CURRENT}/summaries.php?session=${admin.session}` });
    expect(a.envelope.status).toBe(0);
    expect(a.envelope.data.user).toEqual({ name: 'Boss', lastname: 'Tester', email: admin.email });
    expect(a.envelope.data.applications).toBeUndefined();
    expect(a.envelope.data.users.enabled).toBeGreaterThanOrEqual(2);
    expect(typeof a.envelope.data.jobs.running).toBe('number');
    expect(typeof a.envelope.data.knowledges).toBe('number');
    const c = await ctx.request({ method: 'GET', url: `${CURRENT}/summaries.php?session=${consumer.session}` });
    expect(c.envelope.data.users).toBeUndefined();
    expect(c.envelope.data.applications).toEqual({ subscribed: expect.any(Number), unsubscribed: expect.any(Number) });
    const older = await ctx.request({ method: 'GET', url: `${OLDER}/summaries.php?session=${admin.session}` });
    expect(older.envelope.data.users).toBeUndefined();
  });
});
