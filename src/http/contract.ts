import type { FastifySchema, RouteOptions } from 'fastify';
import fastJson from 'fast-json-stringify';
import { z } from 'zod';

/**
 * The reply contract: each route declares the zod schema of its envelope's `data`; from it come the
 * OpenAPI response schema (with an example) and the reply serialiser. Serialisation goes through
 * fast-json-stringify compiled from the same JSON Schema, so only declared fields ever leave the
 * service, and it is faster than JSON.stringify on the same objects.
 */

/** `{status: 1, data: "<message>"}`: every failure, whatever the operation. */
export const errorEnvelope = z
  .object({ status: z.literal(1), data: z.string() })
  .meta({ description: 'Application error: status 1, data a human-readable message', example: { status: 1, data: "Missing required parameter 'tz'" } });

/**
 * The usual success data: the word `success`. Typed as a string because TypeScript widens the
 * literal returned by a context-typed async handler; the document and the tests still pin the word.
 */
export const success: z.ZodType<string> = z.literal('success');

/** A JSON Schema of a zod schema as OpenAPI 3.0 understands it (nullable, no const). */
export function toOpenApiSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, target: 'openapi-3.0', unrepresentable: 'any', reused: 'inline' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

type Json = Record<string, unknown>;

/** An example value for a JSON Schema: its own `example` where the shapes give one, else a plain value of its type. */
export function exampleOf(schema: Json): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const variants = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (variants?.length) return exampleOf(variants[0]!);
  switch (schema.type) {
    case 'string':
      return schema.format === 'binary' ? undefined : 'text';
    case 'integer':
      return 1;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    case 'array':
      return schema.items ? [exampleOf(schema.items as Json)] : [];
    case 'object': {
      const out: Json = {};
      for (const [key, value] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) out[key] = exampleOf(value);
      return out;
    }
    default:
      return null;
  }
}

/** Schema parts OpenAPI 3.0 has no place for inside a schema object (zod's `id` and `examples`). */
function stripForDocument(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripForDocument);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    if (key === 'examples' || key === 'id') continue;
    if (key === 'example') out[key] = value;
    else if (key === 'properties') {
      // A map of field names to schemas: a field may well be called `id`.
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([name, field]) => [name, stripForDocument(field)]));
    } else out[key] = stripForDocument(value);
  }
  // zod writes the full safe-integer range on every int: noise in a document for people.
  if (out.type === 'integer' && out.minimum === -Number.MAX_SAFE_INTEGER && out.maximum === Number.MAX_SAFE_INTEGER) {
    delete out.minimum;
    delete out.maximum;
  }
  return out;
}

export interface ReplyContract {
  /** Fastify's `schema.response`: 200 is the success or error envelope, anything else the error envelope. */
  response: Record<string, Json>;
  /** Fastify's per-route serializer compiler. */
  serializerCompiler: (route: { httpStatus?: string }) => (payload: unknown) => string;
}

const envelopeOf = (data: z.ZodType) => stripForDocument(toOpenApiSchema(z.object({ status: z.literal(0), data }))) as Json;
const compile = (schema: Json) => fastJson(schema as unknown as Parameters<typeof fastJson>[0]);

/**
 * Open records (data rows keyed by CSV column) declare every key, so there is no field list to
 * enforce, and fast-json-stringify's per-key loop is several times slower than JSON.stringify on them.
 */
const isOpenRecord = (schema: z.ZodType): boolean =>
  schema instanceof z.ZodRecord || (schema instanceof z.ZodArray && schema.element instanceof z.ZodRecord);

const serializerOf = (data: z.ZodType): ((payload: unknown) => string) => (isOpenRecord(data) ? JSON.stringify : compile(envelopeOf(data)));

/**
 * The success serialiser. A union of shapes is not left to fast-json-stringify's `anyOf`, which
 * validates the whole reply against each branch: the branch is chosen by parsing a probe (an array's
 * first element, or the value) with zod, then that branch's own serialiser writes the reply. Union
 * members are strict objects, so a probe matches only its own shape.
 */
function successSerializer(data: z.ZodType, json: Json): (payload: unknown) => string {
  if (!(data instanceof z.ZodUnion)) return isOpenRecord(data) ? JSON.stringify : compile(json);
  const branches = (data.options as z.ZodType[]).map((option) => ({
    matches:
      option instanceof z.ZodArray
        ? (value: unknown) => Array.isArray(value) && (value.length === 0 || z.safeParse(option.element, value[0]).success)
        : (value: unknown) => option.safeParse(value).success,
    stringify: serializerOf(option),
  }));
  const whole = compile(json);
  return (payload) => {
    const value = (payload as { data: unknown }).data;
    return (branches.find((branch) => branch.matches(value))?.stringify ?? whole)(payload);
  };
}

/** Builds the documented response and the serialiser of a route whose success data is `data`. */
export function replyContract(data: z.ZodType, example?: unknown): ReplyContract {
  const successJson = envelopeOf(data);
  const errorJson = stripForDocument(toOpenApiSchema(errorEnvelope)) as Json;
  const dataExample = example ?? exampleOf((successJson.properties as Record<string, Json>).data!);
  // Compiled by the route's first success reply, not at start (so the service starts in seconds:
  // docs/benchmarks.md, first start): generating every route's serialiser was a quarter of building the app.
  let stringifySuccess: ((payload: unknown) => string) | undefined;
  const serialize = (payload: unknown) =>
    (payload as { status?: unknown } | null)?.status === 0 ? (stringifySuccess ??= successSerializer(data, successJson))(payload) : JSON.stringify(payload);
  return {
    response: {
      200: {
        description: 'The envelope: status 0 with the data below, or status 1 with an error message',
        oneOf: [successJson, errorJson],
        // @fastify/swagger turns a one-element `examples` into the media type's example.
        examples: [{ status: 0, data: dataExample }],
      },
      default: { description: 'Unknown resource (404), rate limit or server fault: the error envelope', ...errorJson },
    },
    serializerCompiler: ({ httpStatus }) => (httpStatus === '200' ? serialize : (payload) => JSON.stringify(payload)),
  };
}

/**
 * The document of a reply that a client can also ask for as server-sent events (`Accept:
 * text/event-stream`, written by src/http/sse.ts): the `text/event-stream` media type beside the JSON
 * envelope. The stream is described as the list of its events, each `{event, data}`: the progress
 * events named in `events`, then `done` with the success envelope (plus `extra` fields) or `error`
 * with the error envelope, which ends it.
 */
export function eventStreamContract(spec: {
  events: Record<string, z.ZodType>;
  done: z.ZodType;
  extra?: Record<string, z.ZodType>;
  example: { event: string; data: unknown }[];
}): Json {
  const event = (name: string, data: z.ZodType) => z.strictObject({ event: z.literal(name), data });
  const done = z.strictObject({ status: z.literal(0), data: spec.done, ...spec.extra });
  const all = [...Object.entries(spec.events).map(([name, data]) => event(name, data)), event('done', done), event('error', errorEnvelope)];
  const progress = Object.keys(spec.events).map((name) => `\`${name}\``).join(', ');
  const schema = stripForDocument(toOpenApiSchema(z.array(z.union(all)))) as Json;
  schema.description =
    `Server-sent events, when the request has Accept: text/event-stream. Each item is one event on the wire: an \`event: <event>\` line, ` +
    `a \`data: <data as JSON>\` line and a blank line. Zero or more ${progress} events, then \`done\` (the success envelope) or \`error\` ` +
    '(the error envelope) ends the stream. A failure before the first event answers the JSON error envelope instead.';
  return { schema, example: spec.example };
}

/** The area each resource belongs to: the document's groups (with the version), and where to look in src/api. */
export const AREAS: Record<string, string> = {
  sessions: 'Accounts',
  session: 'Accounts',
  passwords: 'Accounts',
  users: 'Accounts',
  summaries: 'Accounts',
  applications: 'Subscriptions',
  subscriptions: 'Subscriptions',
  trainings: 'Trainings',
  training_data: 'Trainings',
  jobs: 'Jobs',
  job_aborts: 'Jobs',
  job_data: 'Jobs',
  jobs_progress: 'Jobs',
  data: 'Data',
  zdai: 'Data',
  zdao: 'Data',
  forecasts: 'Data',
  charts: 'Data',
  app: 'Models',
  stat: 'Models',
  netw: 'Models',
  logs: 'Logs',
  consumptions: 'Logs',
  client: 'Chat',
  usecase: 'Chat',
  usecase_sentence: 'Chat',
  chat: 'Chat',
  sentence: 'Chat',
  'chat-sentence': 'Chat',
  aichat: 'Chat',
  handoffs: 'Chat',
};

const FORM = 'application/x-www-form-urlencoded';
const MULTIPART = 'multipart/form-data';
const JSON_BODY = 'application/json';

/** Request types the spec states (4.x and 9.3); the stated one comes first. The service reads every type. */
const STATED_TYPE: Record<string, string> = {
  'POST sessions': MULTIPART,
  'POST trainings': MULTIPART,
  'PUT trainings': MULTIPART,
  'PATCH trainings': MULTIPART,
  'POST jobs': MULTIPART,
  'PUT jobs': MULTIPART,
  'POST passwords': FORM,
  'PUT passwords': FORM,
  'PATCH users': FORM,
  'POST subscriptions': FORM,
  'POST job_aborts': FORM,
  'PUT data': FORM,
  'POST app': FORM,
  'PUT app': FORM,
  'POST zdao': FORM,
  'POST forecasts': FORM,
};

function consumesOf(method: string, resource: string, upload: boolean): string[] {
  if (upload) return [MULTIPART];
  const stated = STATED_TYPE[`${method} ${resource}`];
  const all = [FORM, MULTIPART, JSON_BODY];
  return stated ? [stated, ...all.filter((type) => type !== stated)] : all;
}

const SESSION: Record<string, string[]>[] = [{ session: [] }, { bearer: [] }, { cookie: [] }];

const VERSION_LABEL: Record<string, { tag: string; op: string }> = {
  '/api/202203010900/': { tag: '202203010900', op: 'current' },
  '/202111101200/': { tag: '202111101200', op: 'older' },
  '/api/202111101200/': { tag: '202111101200 (under /api)', op: 'olderApi' },
};

/**
 * @fastify/swagger's transform: groups each operation by area and version, names it, states its
 * request types and how it authenticates. Routes outside the versions (probes, /docs) stay as they are.
 */
export function documentRoute({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }) {
  const prefix = Object.keys(VERSION_LABEL).find((p) => url.startsWith(p));
  const match = /\/([\w-]+)\.php$/.exec(url);
  // A route's own `hide` holds (the console's static files); swagger-ui's /docs routes are always hidden.
  if (!prefix || !match || !schema) return { schema: { ...schema, hide: Boolean(schema?.hide) || url.startsWith('/docs') }, url };
  const version = VERSION_LABEL[prefix]!;
  const resource = match[1]!;
  const method = String(Array.isArray(route.method) ? route.method[0] : route.method);
  const auth = route.config?.auth ?? 'session';
  const name = resource.replace(/[-_](\w)/g, (_m, c: string) => c.toUpperCase());
  const media = { ...(route.config?.eventStream ? { 'text/event-stream': route.config.eventStream } : {}), ...route.config?.media };
  return {
    url,
    schema: {
      ...schema,
      ...(Object.keys(media).length > 0 ? { response: withMedia(schema.response as Record<string, Json>, media) } : {}),
      tags: [`${AREAS[resource] ?? 'Other'} ${version.tag}`],
      operationId: `${version.op}_${method.toLowerCase()}${name.charAt(0).toUpperCase()}${name.slice(1)}`,
      ...(method === 'GET' ? {} : { consumes: consumesOf(method, resource, route.config?.upload ?? false) }),
      // Public operations take no session; `optional` ones use it when given.
      security: auth === 'public' ? [] : auth === 'optional' ? [{}, ...SESSION] : SESSION,
    },
  };
}

/** The 200 reply as several media types: the JSON envelope as every route documents it, then the others (an event stream, an image). */
function withMedia(response: Record<string, Json>, media: Record<string, Json>): Record<string, Json> {
  const { description, examples, ...envelope } = response['200']!;
  const json = { schema: envelope, example: (examples as unknown[] | undefined)?.[0] };
  return { ...response, 200: { description, content: { 'application/json': json, ...media } } };
}

/** The document's groups, in reading order: each area of each version. */
export function documentTags(): { name: string; description: string }[] {
  const areas = [...new Set(Object.values(AREAS))];
  return Object.values(VERSION_LABEL).flatMap((version) =>
    areas.map((area) => ({ name: `${area} ${version.tag}`, description: `${area} in version ${version.tag}` })),
  );
}
