import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The console (an addition beyond the spec, docs/interface-notes.md): static HTML, CSS and JS under
 * src/console, served at /console/. The page is a client of the public API on the same origin, so the
 * httpOnly session cookie the login sets carries it.
 */

/** Next to this module under tsx (src/http -> src/console); from dist/src/http the compiled build reads the repository's src/console. */
export function consoleRoot(): string {
  const candidates = [new URL('../console/', import.meta.url), new URL('../../../src/console/', import.meta.url)].map((url) => fileURLToPath(url));
  const found = candidates.find((dir) => existsSync(`${dir}index.html`));
  if (!found) throw new Error(`console assets not found in ${candidates.join(' or ')}`);
  return found;
}

/**
 * Same origin only: scripts, styles and API calls from this service; images also as blob: URLs (the chart
 * is fetched first, so an envelope error can be shown as text). Nothing may frame the page.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export default async function consolePlugin(app: FastifyInstance) {
  const root = consoleRoot();
  const headers = {
    'content-security-policy': CONSOLE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
  };
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    // swagger-ui registers @fastify/static too: neither decorates the reply, so the two never clash.
    decorateReply: false,
    // The router ignores trailing slashes, so /console and /console/ are one route: served below.
    index: false,
    redirect: false,
    setHeaders(res) {
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    },
  });
  const page = readFileSync(`${root}index.html`);
  app.get('/console/', { schema: { hide: true } }, async (request, reply) => {
    // The page's relative asset links need the trailing slash.
    if (!request.url.split('?')[0]!.endsWith('/')) return reply.redirect('/console/', 301);
    return reply.headers(headers).type('text/html; charset=utf-8').send(page);
  });
}
