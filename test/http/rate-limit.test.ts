import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT, createTestContext, form, type TestContext } from '../support/helper.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_LOGIN: '3' } });
});
afterAll(async () => {
  await ctx?.close();
});

it('limits login attempts per IP with an HTTP 200 envelope and Retry-After', async () => {
  const replies = [];
  for (let i = 0; i < 4; i++) {
    const last = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, remoteAddress: '10.9.9.9', ...form({ email: `x${i}@example.com`, password: 'x' }) });
    replies.push(last);
  }
  const last = replies[3]!;
  expect(last.statusCode).toBe(200);
  expect(last.envelope.data).toMatch(/^Too many attempts; try again in \d+ seconds$/);
  expect(last.headers['retry-after']).toBeDefined();
  expect(replies.slice(0, 3).every((r) => r.envelope.data === 'Invalid e-mail or password')).toBe(true);
  // Another address is not affected.
  const other = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, remoteAddress: '10.9.9.8', ...form({ email: 'y@example.com', password: 'x' }) });
  expect(other.envelope.data).toBe('Invalid e-mail or password');
});

describe('X-Forwarded-For', () => {
  const wrongLogin = (context: TestContext, remoteAddress: string, forwardedFor: string, i: number) => {
    const body = form({ email: `forged${i}@example.com`, password: 'x' });
    return context.request({ method: 'POST', url: `${CURRENT}/sessions.php`, remoteAddress, payload: body.payload, headers: { ...body.headers, 'x-forwarded-for': forwardedFor } });
  };
  const refusedOf = (replies: { envelope: { data: unknown } }[]) => replies.filter((r) => /^Too many attempts/.test(String(r.envelope.data))).length;

  it('is not believed by default: 30 wrong logins with 30 forged addresses from one socket meet its limit', async () => {
    const replies = [];
    for (let i = 0; i < 30; i++) replies.push(await wrongLogin(ctx, '10.7.7.7', `198.51.100.${i}`, i));
    // RATE_LIMIT_LOGIN is 3 here.
    expect(refusedOf(replies)).toBe(27);
  });

  describe('with TRUST_PROXY=loopback and the default limit of 20', () => {
    let proxied: TestContext;
    beforeAll(async () => {
      proxied = await createTestContext({ env: { RATE_LIMIT_LOGIN: '20', TRUST_PROXY: 'loopback' } });
    });
    afterAll(async () => {
      await proxied?.close();
    });

    it('takes the address the trusted proxy forwards', async () => {
      const replies = [];
      for (let i = 0; i < 30; i++) replies.push(await wrongLogin(proxied, '127.0.0.1', `198.51.100.${i}`, i));
      expect(refusedOf(replies)).toBe(0);
    });

    it('walks X-Forwarded-For only through trusted hops: what the client wrote before its own address does not count', async () => {
      const replies = [];
      for (let i = 0; i < 30; i++) replies.push(await wrongLogin(proxied, '127.0.0.1', `198.51.100.${i}, 203.0.113.9`, 100 + i));
      expect(refusedOf(replies)).toBe(10);
    });

    it('ignores the header from a client that is not a trusted proxy', async () => {
      const replies = [];
      for (let i = 0; i < 30; i++) replies.push(await wrongLogin(proxied, '10.7.7.8', `198.51.100.${i}`, 200 + i));
      expect(refusedOf(replies)).toBe(10);
    });
  });

  it('with TRUST_PROXY=1 (a hop count) takes the last forwarded address, whoever sent it', async () => {
    const hops = await createTestContext({ env: { RATE_LIMIT_LOGIN: '20', TRUST_PROXY: '1' } });
    try {
      const distinct = [];
      for (let i = 0; i < 30; i++) distinct.push(await wrongLogin(hops, '10.7.7.9', `203.0.113.${i}`, 300 + i));
      expect(refusedOf(distinct)).toBe(0);
      const same = [];
      for (let i = 0; i < 30; i++) same.push(await wrongLogin(hops, '10.7.7.9', `198.51.100.${i}, 192.0.2.1`, 400 + i));
      expect(refusedOf(same)).toBe(10);
    } finally {
      await hops.close();
    }
  });
});
