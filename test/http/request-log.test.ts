import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT, createTestContext, type TestContext } from '../support/helper.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

/** The parsed log lines of one request, by its id. */
const linesOf = (requestId: string) =>
  ctx.logLines.map((line) => JSON.parse(line) as Record<string, any>).filter((line) => line.reqId === requestId);

describe('request log lines', () => {
  it('writes one line per request when it completes: request (secrets redacted), status and time', async () => {
    const user = await ctx.createUser();
    const res = await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${user.session}` });
    expect(res.envelope.status).toBe(0);
    const lines = linesOf(String(res.headers['x-request-id']));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { method: 'GET', url: `${CURRENT}/sessions.php?session=%5Bredacted%5D` },
      res: { statusCode: 200 },
    });
    expect(lines[0]!.responseTime).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(lines)).not.toContain(user.session);
  });

  it('keeps an application error line beside it, under the same request id', async () => {
    const res = await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=not-a-session` });
    expect(res.envelope).toEqual({ status: 1, data: 'Invalid or expired session' });
    expect(linesOf(String(res.headers['x-request-id'])).map((line) => line.msg)).toEqual(['request failed', 'request completed']);
  });
});
