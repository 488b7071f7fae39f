import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { parse as parseQuery } from 'node:querystring';
import type { Config } from './config.js';
import { Errors } from './domain/errors.js';
import { failure, ok } from './http/envelope.js';
import { z } from 'zod';
import { documentRoute, documentTags, errorEnvelope, replyContract, toOpenApiSchema } from './http/contract.js';
import { edgeServerOptions, limitBodyPauses, lingerAfterEarlyReplies, refuseAnnouncedOversize, trustProxyOption } from './http/edge.js';
import { registerErrorHandling } from './http/errors.js';
import { loggerOptions, redactingChild, requestLoggerFactory, RequestLogLines } from './http/logging.js';
import type { Logger } from 'pino';
import { multipartFieldsHook } from './http/multipart-fields.js';
import { registerVersions, VERSION_PREFIXES } from './http/version-router.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import type { Services } from './services.js';

/** Metric labels from the matched route pattern only, so label values stay few. */
function routeLabels(url: string | undefined): { version: string; resource: string } {
  const match = url ? /^\/(?:api\/)?(\d{12})\/([\w-]+)\.php$/.exec(url) : null;
  return match ? { version: match[1]!, resource: match[2]! } : { version: 'none', resource: url ?? 'unknown' };
}

const LABEL_SETS_MAX = 1000;

/** The HTTP metrics' labels of a request: the duration's, and the count's with the status. */
function httpLabels(url: string | undefined, method: string, statusCode: number) {
  const timed = { ...routeLabels(url), method };
  return { timed, counted: { ...timed, status: String(statusCode) } };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Registers a plugin (one that shares the app's context, as @fastify/multipart does) without the hooks it
 * adds to every request. @fastify/multipart's two (an async onRequest that adds a 'close' listener to each
 * reply, an async onResponse) only remove files saved by saveRequestFiles(), which the service never
 * calls: uploads are read as streams (request.parts()). Two async hooks on every request were a share of
 * the session check's CPU (docs/benchmarks.md, sessions).
 */
async function withoutPerRequestHooks(app: FastifyInstance, register: () => PromiseLike<unknown>): Promise<void> {
  const own = Object.getOwnPropertyDescriptor(app, 'addHook') as PropertyDescriptor;
  const addHook = app.addHook.bind(app) as (...args: unknown[]) => FastifyInstance;
  const dropped = new Set(['onRequest', 'onResponse']);
  const filtered = (name: string, ...rest: unknown[]) => (dropped.has(name) ? app : addHook(name, ...rest));
  app.addHook = filtered;
  try {
    await register();
  } finally {
    Object.defineProperty(app, 'addHook', own);
  }
}

export interface AppOptions {
  config: Config;
  services: Services;
  /** A ready pino logger (tests capture lines with it); otherwise one is made from LOG_LEVEL. */
  logger?: Logger;
  /** Readiness: database reachable and migrations current. */
  readiness?: () => Promise<{ ready: boolean; reason?: string }>;
  /** Prometheus instruments; a private set is made when absent. */
  metrics?: Metrics;
  /** Refreshes gauges that need the database (queue depth, jobs by status) before a scrape. */
  beforeScrape?: () => Promise<void>;
}

/**
 * The HTTP application as a function of its dependencies; server.ts and the tests both build it.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, services } = options;
  const app = Fastify({
    ...(options.logger ? { loggerInstance: redactingChild(options.logger) } : { logger: loggerOptions(config.logLevel) }),
    logController: new RequestLogLines(),
    childLoggerFactory: requestLoggerFactory,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w-]{1,64}$/.test(given) ? given : randomUUID();
    },
    // request.ip (the login rate limit's key) comes from X-Forwarded-For only through the proxies configured.
    trustProxy: trustProxyOption(config.trustProxy),
    ...edgeServerOptions(config),
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
  });

  // We validate parameters ourselves (merged from every source); route schemas only feed OpenAPI.
  app.setValidatorCompiler(() => (data: unknown) => ({ value: data }));

  app.decorateRequest('caller', null);
  app.decorate('authenticate', (token: string | undefined) => services.sessions.authenticate(token));
  // Upload spool files and staging tables of a process that died mid-upload go before anything is served.
  app.addHook('onReady', async () => void (await services.data.removeStaleUploads()));

  registerErrorHandling(app, { maxUploadMb: Math.round(config.maxUploadBytes / 1024 / 1024) });
  limitBodyPauses(app.server, config.bodyTimeoutMs, app.log);
  refuseAnnouncedOversize(app, config.maxUploadBytes);
  lingerAfterEarlyReplies(app, config);

  // Every route under a version prefix declares who may call it.
  app.addHook('onRoute', (route) => {
    if (VERSION_PREFIXES.some((prefix) => route.url.startsWith(prefix)) && !route.config?.auth) {
      throw new Error(`Route ${String(route.method)} ${route.url} declares no auth scope`);
    }
  });

  // Callback hooks, not async ones: an async hook costs every request a promise and a turn of the
  // microtask queue (the session check's CPU: docs/benchmarks.md, sessions).
  app.addHook('onSend', function requestIdHeader(request, reply, payload, done) {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });

  const metrics = options.metrics ?? createMetrics({ defaults: false });
  // The label sets of each route pattern, method and status, made once instead of a regular expression and
  // three objects a request (docs/benchmarks.md, sessions). As many as the metric's own series; past
  // LABEL_SETS_MAX (unrouted URLs) they are made each time.
  const labelSets = new Map<string, ReturnType<typeof httpLabels>>();
  app.addHook('onResponse', function httpMetrics(request, reply, done) {
    const url = request.routeOptions.url;
    const key = `${request.method} ${reply.statusCode} ${url}`;
    let labels = labelSets.get(key);
    if (!labels) {
      labels = httpLabels(url, request.method, reply.statusCode);
      if (labelSets.size < LABEL_SETS_MAX) labelSets.set(key, labels);
    }
    metrics.httpRequests.inc(labels.counted);
    metrics.httpDuration.observe(labels.timed, reply.elapsedTime / 1000);
    if (request.errorCode) metrics.envelopeErrors.inc({ version: labels.timed.version, resource: labels.timed.resource, code: request.errorCode });
    done();
  });

  await app.register(cookie);
  await app.register(cors, {
    origin: config.corsOrigins && config.corsOrigins.length > 0 ? config.corsOrigins : '*',
    credentials: Boolean(config.corsOrigins && config.corsOrigins.length > 0),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    exposedHeaders: ['x-request-id', 'retry-after'],
    maxAge: 600,
  });
  await app.register(formbody);
  await withoutPerRequestHooks(app, () =>
    app.register(multipart, {
      limits: { fileSize: config.maxUploadBytes, fields: 200, fieldSize: 1024 * 1024, files: 20 },
    }),
  );
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) => Errors.rateLimited(Math.max(1, Math.ceil(context.ttl / 1000))),
  });

  // Legacy clients post JSON with odd content types, or nothing at all: be lenient about both. Fastify's
  // secure parser refuses `__proto__` keys and `constructor.prototype`, which would poison merged parameters.
  const secureJson = app.getDefaultJsonParser('error', 'error');
  const parseJson = (request: FastifyRequest, text: string, done: (error: Error | null, body?: unknown) => void) =>
    void secureJson(request, text, (error, body) => {
      if (!error) return done(null, body);
      // Fastify's error does not say why: valid JSON that it refused is a poisoning attempt.
      const why = isJson(text) ? "must not contain the key '__proto__' or 'constructor.prototype'" : 'is not valid JSON';
      done(Errors.invalidParameter('body', why), undefined);
    });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body).trim();
    if (text === '') return done(null, {});
    parseJson(request, text, done);
  });
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body).trim();
    if (text.startsWith('{')) return parseJson(request, text, done);
    done(null, parseQuery(text));
  });

  app.addHook('preHandler', multipartFieldsHook);

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Model Training and Chat Service',
        version: '202203010900',
        description:
          'Every reply is the envelope {status, data}: status 0 with the data documented per operation, or status 1 with a message (HTTP 200). ' +
          'Every parameter is read from the query string, an urlencoded or multipart form, or JSON alike; GET operations list them in the query, the others in the body.',
        license: { name: 'Proprietary', url: 'http://front.example/license' },
      },
      servers: [{ url: '/' }],
      tags: [...documentTags(), { name: 'Probes', description: 'Liveness, readiness and metrics for orchestrators' }],
      components: {
        securitySchemes: {
          session: { type: 'apiKey', in: 'query', name: 'session' },
          bearer: { type: 'http', scheme: 'bearer' },
          cookie: { type: 'apiKey', in: 'cookie', name: 'session' },
        },
        schemas: { ErrorEnvelope: toOpenApiSchema(errorEnvelope) },
      },
    },
    transform: documentRoute,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await app.register(import('./http/console.js')); // the console page at /console/ (an addition beyond the spec)

  // Probes for orchestrators: /healthz says the process is up, /readyz that it can serve.
  const probe = (summary: string, data: z.ZodType) => {
    const contract = replyContract(data);
    return { schema: { summary, tags: ['Probes'], security: [], response: contract.response }, serializerCompiler: contract.serializerCompiler };
  };
  app.get('/healthz', probe('The process is up', z.literal('ok')), async () => ok('ok'));
  const metricsDoc = { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } };
  app.get('/metrics', { schema: { summary: 'Prometheus metrics', tags: ['Probes'], security: [], response: { 200: metricsDoc } } }, async (_request, reply) => {
    await options.beforeScrape?.().catch(() => undefined);
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.get('/readyz', probe('The database is reachable and migrations are current', z.literal('ready')), async (_request, reply) => {
    const state = options.readiness ? await options.readiness().catch((e: Error) => ({ ready: false, reason: e.message })) : { ready: true };
    if (!state.ready) return reply.code(503).send(failure(`not ready: ${state.reason ?? 'unknown'}`));
    return ok('ready');
  });

  await registerVersions(app, services, { loginPerMinute: config.rateLimitLogin });
  return app;
}
