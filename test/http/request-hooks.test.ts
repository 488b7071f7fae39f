import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT, createTestContext, type TestContext } from '../support/helper.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

/** The hooks Fastify runs for one route, by lifecycle step, as printRoutes names them. */
function hooksOf(routes: string, url: string, method: string): Record<string, string[]> {
  const lines = routes.split('\n');
  const at = lines.findIndex((line) => line.includes(`${url} (`) && new RegExp(`[(,]\\s*${method}\\b`).test(line));
  if (at < 0) throw new Error(`route ${method} ${url} not printed`);
  const hooks: Record<string, string[]> = {};
  for (const line of lines.slice(at + 1)) {
    const hook = /• \((\w+)\) (\[.*\])/.exec(line);
    if (!hook) break;
    hooks[hook[1]!] = JSON.parse(hook[2]!) as string[];
  }
  return hooks;
}

describe('the hooks of every request', () => {
  it('runs only the service’s own per-request hooks on the session check, none of @fastify/multipart’s', async () => {
    const routes = ctx.app.printRoutes({ includeHooks: true, commonPrefix: false });
    const hooks = hooksOf(routes, `${CURRENT}/sessions.php`, 'GET');
    expect(hooks.onRequest).toEqual(['refuseOversize()', 'fastifyCookieHandler()', 'handleCors()']);
    expect(hooks.preHandler).toEqual(['multipartFieldsHook()']);
    // The last one is the tests' own (support/helper.ts checks every reply against its contract).
    expect(hooks.onSend).toEqual(['lingerAfterEarlyReply()', 'requestIdHeader()', 'fastifyCookieOnSendHandler()', 'checkReplyContract()']);
    expect(hooks.onResponse).toEqual(['httpMetrics()']);
  });

});
