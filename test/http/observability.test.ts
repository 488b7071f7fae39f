import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { migrationsCurrent } from '../../src/db/migrator.js';
import { CURRENT, createTestContext, type TestContext } from '../support/helper.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

it('answers /healthz, and /readyz from the database and migrations', async () => {
  expect((await ctx.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 0, data: 'ok' });
  expect(await migrationsCurrent(ctx.database)).toBe(true);
  const notReady = await buildApp({ config: ctx.config, services: ctx.services, readiness: async () => ({ ready: false, reason: 'migrations pending' }) });
  const res = await notReady.inject({ method: 'GET', url: '/readyz' });
  expect(res.statusCode).toBe(503);
  expect(res.json()).toEqual({ status: 1, data: 'not ready: migrations pending' });
  await notReady.close();
});

it('exports request counts and latency by version and resource, and envelope errors by code', async () => {
  const user = await ctx.createUser();
  await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${user.session}` });
  await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=wrong` });
  const text = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
  expect(text).toMatch(/mtcs_http_requests_total\{version="202203010900",resource="sessions",method="GET",status="200"\} [2-9]/);
  expect(text).toContain('mtcs_http_request_duration_seconds_bucket{le="0.001",version="202203010900",resource="sessions",method="GET"}');
  expect(text).toMatch(/mtcs_envelope_errors_total\{version="202203010900",resource="sessions",code="invalid_session"\} 1/);
});
