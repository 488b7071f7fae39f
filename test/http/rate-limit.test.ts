import { afterAll, beforeAll, expect, it } from 'vitest';
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
