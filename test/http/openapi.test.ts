import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/helper.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => ctx.close());

type Json = Record<string, any>;
const operationsOf = (document: Json) =>
  Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, operation]) => ({ path, method, operation: operation as Json })),
  );

describe('the OpenAPI document (/docs/json)', () => {
  it('passes the Redocly linter (recommended rules) without errors', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: res.body, absoluteRef: 'openapi.json', config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`);
    expect(errors).toEqual([]);
  });

  it('groups every versioned operation by area and version, with a reply schema and an example', async () => {
    const document = (await ctx.app.inject({ method: 'GET', url: '/docs/json' })).json<Json>();
    const all = operationsOf(document);
    expect(all.length).toBe(114);
    const withoutReply = all.filter(({ path, operation }) => path !== '/metrics' && !operation.responses?.['200']?.content?.['application/json']?.schema?.oneOf);
    expect(withoutReply.map(({ method, path }) => `${method.toUpperCase()} ${path}`)).toEqual([]);
    const versioned = all.filter(({ path }) => /\/\d{12}\//.test(path));
    expect(versioned.length).toBe(111);
    for (const { operation } of versioned) {
      expect(operation.tags?.[0]).toMatch(/^(Accounts|Subscriptions|Trainings|Jobs|Data|Models|Logs|Chat) \d{12}/);
      expect(operation.responses['200'].content['application/json'].example).toBeDefined();
    }
  });

  it('documents the /aichat event stream beside its JSON reply: delta events, then done or error with the envelope', async () => {
    const document = (await ctx.app.inject({ method: 'GET', url: '/docs/json' })).json<Json>();
    const content = document.paths['/api/202203010900/aichat.php'].post.responses['200'].content;
    expect(Object.keys(content)).toEqual(['application/json', 'text/event-stream']);
    expect(content['application/json'].schema.oneOf).toHaveLength(2);
    const events = content['text/event-stream'].schema.items.anyOf as Json[];
    expect(events.map((e) => e.properties.event.enum)).toEqual([['delta'], ['done'], ['error']]);
    expect(events[1]!.properties.data.properties).toMatchObject({ status: { enum: [0] }, data: { type: 'string' }, usage: { type: 'object' } });
    expect(events[2]!.properties.data.properties).toMatchObject({ status: { enum: [1] }, data: { type: 'string' } });
    expect(content['text/event-stream'].example.at(-1).event).toBe('done');
  });

  it('documents the chart images beside the JSON envelope of GET and POST /charts', async () => {
    const document = (await ctx.app.inject({ method: 'GET', url: '/docs/json' })).json<Json>();
    for (const method of ['get', 'post']) {
      const operation = document.paths['/api/202203010900/charts.php'][method];
      expect(operation.tags).toEqual(['Data 202203010900']);
      const content = operation.responses['200'].content;
      expect(Object.keys(content)).toEqual(['application/json', 'image/svg+xml', 'image/png']);
      expect(content['image/png'].schema).toMatchObject({ type: 'string', format: 'binary' });
    }
  });

  it('documents the request types clients use: multipart uploads, urlencoded forms, JSON', async () => {
    const document = (await ctx.app.inject({ method: 'GET', url: '/docs/json' })).json<Json>();
    const upload = document.paths['/api/202203010900/data.php'].post.requestBody.content;
    expect(Object.keys(upload)).toEqual(['multipart/form-data']);
    expect(upload['multipart/form-data'].schema.properties.Servicefile).toMatchObject({ type: 'string', format: 'binary' });
    const login = document.paths['/api/202203010900/sessions.php'].post.requestBody.content;
    expect(Object.keys(login)).toEqual(['multipart/form-data', 'application/x-www-form-urlencoded', 'application/json']);
    const abort = document.paths['/api/202203010900/job_aborts.php'].post.requestBody.content;
    expect(Object.keys(abort)[0]).toBe('application/x-www-form-urlencoded');
    const jobs = document.paths['/api/202203010900/jobs.php'].get.parameters as Json[];
    expect(jobs.find((p) => p.name === 'tz')).toMatchObject({ in: 'query', required: true, schema: { type: 'string' } });
    expect(jobs.find((p) => p.name === 'job_id')).toMatchObject({ in: 'query', required: true, schema: { type: 'integer' } });
  });
});
