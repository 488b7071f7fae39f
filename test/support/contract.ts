import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifyInstance } from 'fastify';

type Json = Record<string, any>;

/**
 * The contract check: every reply the HTTP suite receives is validated against the documented
 * response schema of its operation in the app's own OpenAPI document, so a reply shape that drifts
 * from the document fails the test that received it.
 */
export function contractChecker(app: FastifyInstance) {
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  const compiled = new Map<string, ValidateFunction | null>();
  let document: Json | undefined;

  function validatorFor(method: string, path: string, statusCode: number): ValidateFunction | null {
    const key = `${method} ${path} ${statusCode}`;
    if (compiled.has(key)) return compiled.get(key)!;
    document ??= app.swagger() as Json;
    const responses = document.paths?.[path]?.[method.toLowerCase()]?.responses as Json | undefined;
    const response = responses?.[String(statusCode)] ?? responses?.default;
    const schema = response?.content?.['application/json']?.schema;
    const validate = schema ? ajv.compile(schema) : null;
    compiled.set(key, validate);
    return validate;
  }

  return {
    /** A description of the mismatch, or undefined when the reply matches (or is not a documented JSON reply). */
    check(method: string, path: string | undefined, statusCode: number, body: unknown): string | undefined {
      if (!path || typeof body !== 'string') return undefined;
      const validate = validatorFor(method, path, statusCode);
      if (!validate) return undefined;
      let reply: unknown;
      try {
        reply = JSON.parse(body);
      } catch {
        return `${method} ${path}: HTTP ${statusCode} reply is not JSON`;
      }
      if (validate(reply)) return undefined;
      const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
      return `${method} ${path}: HTTP ${statusCode} reply does not match the documented schema: ${problems.join('; ')}; reply: ${body.slice(0, 400)}`;
    },
  };
}

/**
 * A server-sent-events reply checked against its operation's documented `text/event-stream` media
 * type (hijacked replies skip the onSend hook, so streaming tests call this): answers the mismatches,
 * or undefined when every event matches. Each event is `event: <name>` and `data: <JSON>`.
 */
export function eventStreamProblems(document: Json, method: string, path: string, body: string): string | undefined {
  const schema = document.paths?.[path]?.[method.toLowerCase()]?.responses?.['200']?.content?.['text/event-stream']?.schema as Json | undefined;
  if (!schema) return `${method} ${path}: no text/event-stream reply documented`;
  const events = body
    .trim()
    .split('\n\n')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      return { event, data: data === undefined ? undefined : JSON.parse(data) };
    });
  const validate = new Ajv({ strict: false, validateFormats: false }).compile(schema);
  if (validate(events)) return undefined;
  const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
  return `${method} ${path}: the event stream does not match the document: ${problems.join('; ')}; stream: ${body.slice(0, 400)}`;
}
