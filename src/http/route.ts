import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { z } from 'zod';
import type { Caller } from '../domain/caller.js';
import { requireAdmin } from '../domain/shared/access.js';
import { replyContract, toOpenApiSchema } from './contract.js';
import { ok } from './envelope.js';
import { collectParams, parseParams } from './params.js';

/**
 * Who may call a route: `public` (no session), `optional` (a session is used when presented and must
 * then be valid), `session` (any signed-in user), `admin` (administrators only). Every route under a
 * version prefix must declare one; registration fails otherwise.
 */
export type AuthScope = 'public' | 'optional' | 'session' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthScope;
    /** The handler reads the multipart stream itself (file uploads). */
    upload?: boolean;
    /** The document of the route's server-sent-events reply (contract.ts eventStreamContract). */
    eventStream?: Record<string, unknown>;
    /** Other media types of the 200 reply besides the JSON envelope (e.g. image/png), each `{schema, example?}`. */
    media?: Record<string, Record<string, unknown>>;
  }
  interface FastifyRequest {
    caller: Caller | null;
    /** Set when the reply is an error envelope, for the metrics. */
    errorCode?: string;
  }
  interface FastifyInstance {
    /** The one session guard: resolves the presented session value to its caller. */
    authenticate(token: string | undefined): Promise<Caller>;
    /** The one error path (errors.ts), for replies that render a failure themselves (event streams). */
    renderError: import('./errors.js').ErrorRenderer;
  }
}

type CallerFor<A extends AuthScope> = A extends 'session' | 'admin' ? Caller : Caller | null;

export interface RouteContext<P, A extends AuthScope> {
  params: P;
  caller: CallerFor<A>;
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface RouteSpec<S extends z.ZodType, A extends AuthScope, R extends z.ZodType = z.ZodType> {
  method: Extract<HTTPMethods, 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'>;
  /** Resource path inside the version prefix, e.g. `/sessions.php`. */
  url: string;
  auth: A;
  summary: string;
  params: S;
  upload?: boolean;
  /** Upload routes read their multipart fields themselves: the documented form (file fields as `format: binary`). */
  form?: z.ZodType;
  /**
   * The envelope's `data` on success. It documents the reply and serialises it: only declared fields
   * leave the service. `example` overrides the example derived from the schema.
   */
  reply: R;
  example?: z.output<R>;
  /** The reply can also be server-sent events (src/http/sse.ts): their document, from eventStreamContract. */
  stream?: Record<string, unknown>;
  /** The reply can also be a document of these media types (the handler sends it itself): their OpenAPI description. */
  media?: Record<string, Record<string, unknown>>;
  /** Per-IP limit (requests per minute) through @fastify/rate-limit, for login-like routes. */
  perMinute?: number;
  /** Answers the envelope's `data`; a thrown AppError becomes the error envelope. */
  handler(ctx: RouteContext<z.infer<S>, A>): Promise<NoInfer<z.output<R>>>;
}

/** The session value from the `session` parameter, a `session` cookie, or `Authorization: Bearer`. */
export function presentedSession(request: FastifyRequest, params: Record<string, unknown>): string | undefined {
  const fromParams = params.session;
  if (typeof fromParams === 'string' && fromParams !== '') return fromParams;
  const auth = request.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice(7).trim() || undefined;
  const cookie = request.cookies?.session;
  return cookie || undefined;
}

/** Applies a route's auth scope; also used by upload handlers once the session field has arrived. */
export async function guard(request: FastifyRequest, scope: AuthScope, params: Record<string, unknown>): Promise<Caller | null> {
  if (scope === 'public') return null;
  const token = presentedSession(request, params);
  if (scope === 'optional' && token === undefined) return null;
  const caller = await request.server.authenticate(token);
  if (scope === 'admin') requireAdmin(caller);
  request.caller = caller;
  return caller;
}

export function defineRoute<S extends z.ZodType, A extends AuthScope, R extends z.ZodType = z.ZodType>(app: FastifyInstance, spec: RouteSpec<S, A, R>): void {
  const docSchema = toDocSchema(spec.form ?? spec.params);
  const inBody = spec.method !== 'GET';
  const contract = replyContract(spec.reply, spec.example);
  app.route({
    method: spec.method,
    url: spec.url,
    config: {
      auth: spec.auth,
      upload: spec.upload ?? false,
      ...(spec.stream ? { eventStream: spec.stream } : {}),
      ...(spec.media ? { media: spec.media } : {}),
      ...(spec.perMinute ? { rateLimit: { max: spec.perMinute, timeWindow: 60_000 } } : {}),
    },
    schema: {
      summary: spec.summary,
      ...(inBody ? { body: docSchema } : { querystring: docSchema }),
      response: contract.response,
    },
    serializerCompiler: contract.serializerCompiler,
    handler: async (request, reply) => {
      const raw = collectParams(request);
      const caller = spec.upload ? null : await guard(request, spec.auth, raw);
      const params = parseParams(spec.params, raw);
      const data = await spec.handler({ params, caller: caller as CallerFor<A>, request, reply });
      if (reply.sent) return reply;
      return ok(data);
    },
  });
}

/**
 * OpenAPI documentation of a route's parameters, generated from its zod schema. A parameter is
 * required when its schema refuses absence (defaults and optionals do not).
 */
function toDocSchema(schema: z.ZodType): Record<string, unknown> {
  try {
    const json = toOpenApiSchema(schema);
    delete json.additionalProperties;
    delete json.required;
    if (schema instanceof z.ZodObject) {
      const required = Object.entries(schema.shape as Record<string, z.ZodType>)
        .filter(([, field]) => !field.safeParse(undefined).success)
        .map(([name]) => name);
      if (required.length > 0) json.required = required;
    }
    return json;
  } catch {
    return { type: 'object' };
  }
}
