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
