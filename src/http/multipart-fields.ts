import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { finished } from 'node:stream/promises';

/**
 * For routes that take no file, a multipart body is just a form: its fields become the body so the
 * one parameter reader sees them. Stray file parts are drained and ignored.
 */
export async function multipartFieldsAsBody(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart() || request.routeOptions.config?.upload) return;
  const fields: Record<string, string> = {};
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      part.file.resume();
      // finished() also settles when the body is cut inside the file (an error, no 'end'): no hang.
      await finished(part.file);
      continue;
    }
    const value: unknown = part.value;
    if (typeof value === 'string') fields[part.fieldname] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') fields[part.fieldname] = String(value);
  }
  request.body = fields;
}

/**
 * The preHandler hook: a callback hook that answers at once for a request without a multipart form (every
 * request but a few), instead of an async hook's promise and microtask turn (a cost every request would pay,
 * the session check included: docs/benchmarks.md, sessions).
 */
export function multipartFieldsHook(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (!request.isMultipart() || request.routeOptions.config?.upload) return done();
  multipartFieldsAsBody(request).then(() => done(), done);
}
