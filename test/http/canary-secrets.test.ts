import { randomBytes } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/domain/accounts/secrets.js';
import { CURRENT, OLDER, createTestContext, multipart, type TestContext } from '../support/helper.js';
import { startStub } from '../support/openai-stub.js';
import { enumerateRoutes, plausibleValue, type AppRoute, type OwnedRows } from '../support/routes.js';

/**
 * Canary secrets (docs/interface-notes.md, Canary secrets, `tz` and `period`): one run plants known provider
 * keys, passwords, session tokens and recovery tokens, drives every operation of both versions with them (the
 * routes come from the app itself, test/support/routes.ts), and then greps every reply body, every reply
 * header, every log line and every e-mail for them. The only places a secret may appear are the ones the
 * interface needs: a session token in the login reply that issued it (body and Set-Cookie) and in the reply
 * of a session check (GET /sessions, spec 4.1 and section 9) that presented that very token; a recovery token
 * in its own recovery e-mail. Nothing in any log line, whatever the level.
 */

const TZ = 'Europe/Madrid';
/** The SECRET_KEY createTestContext gives the services (test/support/helper.ts). */
const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdef0123456789';
const CSV = 'year,month,day,store,sales\n2021,1,1,A,10\n2021,1,2,B,20\n2021,1,3,A,30\n2021,1,4,B,\n';
const GUARD_REFUSALS = ['Invalid or expired session', "Missing required parameter 'session'"];

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

// ---------- the canaries ----------

type CanaryKind = 'provider key' | 'password' | 'session token' | 'recovery token' | 'secret key';

interface Canary {
  kind: CanaryKind;
  value: string;
  /** The value and the pieces of it that would still be a leak (a truncated or masked copy). */
  needles: string[];
  /** Session tokens: the index of the login reply that issued it. */
  issuedIn?: number;
  /** Recovery tokens: the index of the e-mail that delivered it. */
  mailedIn?: number;
}

/** Every 12-character piece of `text`, 4 apart: any copy of 15 characters or more contains one. */
const pieces = (text: string) => {
  const out: string[] = [];
  for (let i = 0; i + 12 <= text.length; i += 4) out.push(text.slice(i, i + 12));
  return out;
};

const canaries: Canary[] = [];
function plant(kind: CanaryKind, value: string, extra: Partial<Canary> = {}): string {
  let needles = [value];
  // The administrators' client listing shows `sk-...` and the last 4 characters (maskSecret): the rest must never show.
  if (kind === 'provider key') needles = [value, ...pieces(value.slice(3, -4))];
  if (kind === 'session token' || kind === 'recovery token') needles = [value, ...pieces(value), hashToken(value)];
  canaries.push({ kind, value, needles, ...extra });
  return value;
}
const newPassword = () => plant('password', `Canary-Pw-${hex(6)}!`);
const newProviderKey = () => plant('provider key', `sk-canary${hex(14)}QZXW`);

// ---------- what the clients saw ----------

/** One request and its reply as the client received them. */
interface Exchange {
  label: string;
  method: string;
  url: string;
  /** The session token the request carried, if any. */
  presented?: string;
  statusCode: number;
  headers: string;
  body: string;
}

const exchanges: Exchange[] = [];

/** One place a canary was found where it must not be. */
interface Leak {
  kind: CanaryKind;
  where: string;
  excerpt: string;
}

const isSessionCheck = (e: Exchange) => e.method === 'GET' && /\/sessions\.php$/.test(e.url.split('?')[0]!);

/** Every canary found outside the places the interface allows it (see the file comment). */
function findLeaks(all: Canary[], seen: Exchange[], logLines: string[], mails: { to: string; subject: string; text: string }[]): Leak[] {
  const leaks: Leak[] = [];
  const scan = (text: string, where: string, allowed: (c: Canary) => boolean) => {
    for (const canary of all) {
      if (allowed(canary)) continue;
      const needle = canary.needles.find((n) => text.includes(n));
      if (needle === undefined) continue;
      const at = text.indexOf(needle);
      leaks.push({ kind: canary.kind, where, excerpt: text.slice(Math.max(0, at - 80), at + needle.length + 40) });
    }
  };
  seen.forEach((e, i) => {
    const allowed = (c: Canary) => c.kind === 'session token' && (c.issuedIn === i || (isSessionCheck(e) && e.presented === c.value));
    scan(e.body, `reply body of ${e.label} (${e.method} ${e.url.split('?')[0]})`, allowed);
    scan(e.headers, `reply headers of ${e.label} (${e.method} ${e.url.split('?')[0]})`, allowed);
  });
  logLines.forEach((line, i) => scan(line, `log line ${i}`, () => false));
  mails.forEach((m, i) => scan(`${m.subject}\n${m.text}`, `e-mail ${i} to ${m.to} (${m.subject})`, (c) => c.kind === 'recovery token' && c.mailedIn === i));
  return leaks;
}

// ---------- the service under test ----------

const stub = startStub();
await stub.listen();
const ctx: TestContext = await createTestContext({ env: { LLM_BASE_URL: `${stub.url}/v1`, LLM_TIMEOUT_MS: '3000' } });
// Whatever an operator may switch on: debug and trace lines must not carry secrets either.
ctx.app.log.level = 'trace';
const ROUTES = enumerateRoutes(ctx.app);
plant('secret key', TEST_SECRET_KEY);

afterAll(async () => {
  await ctx.close();
  await stub.close();
});

type Envelope = { status: number | string; data: any };

/** Sends a request, records it and its reply, and answers the reply's envelope (an event stream's closing event). */
async function send(label: string, options: InjectOptions, presented?: string): Promise<{ res: LightMyRequestResponse; envelope: Envelope }> {
  const res = await ctx.app.inject(options);
  const url = typeof options.url === 'string' ? options.url : '';
  exchanges.push({ label, method: String(options.method), url, presented, statusCode: res.statusCode, headers: JSON.stringify(res.headers), body: res.body });
  expect(res.statusCode, `${label}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
  if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    const last = res.body.trim().split('\n\n').at(-1) ?? '';
    return { res, envelope: JSON.parse(/^data: (.*)$/m.exec(last)?.[1] ?? 'null') as Envelope };
  }
  return { res, envelope: res.json<Envelope>() };
}

type Place = 'query' | 'body' | 'bearer' | 'cookie';
type Encoding = 'form' | 'json' | 'multipart';

const urlencode = (fields: Record<string, string | number>) => new URLSearchParams(Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** A request to `url` with `fields`, the session at `place` and a body in `encoding` (GET: all in the query). */
function build(method: string, url: string, fields: Record<string, string | number>, session: string | undefined, place: Place, encoding: Encoding, files: { field: string; filename: string; content: string }[] = []): InjectOptions {
  const query: Record<string, string | number> = {};
  const body: Record<string, string | number> = { ...fields };
  const headers: Record<string, string> = {};
  if (session !== undefined) {
    if (place === 'query' || (place === 'body' && method === 'GET')) query.session = session;
    if (place === 'body' && method !== 'GET') body.session = session;
    if (place === 'bearer') headers.authorization = `Bearer ${session}`;
    if (place === 'cookie') headers.cookie = `session=${session}`;
  }
  if (method === 'GET' || method === 'DELETE') {
    Object.assign(query, body);
    const qs = urlencode(query);
    return { method, url: qs ? `${url}?${qs}` : url, headers };
  }
  const qs = urlencode(query);
  const target = qs ? `${url}?${qs}` : url;
  if (encoding === 'multipart') {
    const mp = multipart(body, files);
    return { method, url: target, payload: mp.payload, headers: { ...headers, ...mp.headers } };
  }
  if (encoding === 'json') return { method, url: target, payload: JSON.stringify(body), headers: { ...headers, 'content-type': 'application/json' } };
  return { method, url: target, payload: urlencode(body), headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' } };
}

// ---------- the people and what they own ----------

interface Actor extends OwnedRows {
  name: string;
  email: string;
  password: string;
  session: string;
}

/** Logs in through HTTP; the token it answers is a canary whose one allowed reply is this one. */
async function login(actor: Pick<Actor, 'email' | 'password' | 'name'>, base = CURRENT): Promise<string> {
  const { envelope } = await send(`login of ${actor.name}`, build('POST', `${base}/sessions.php`, { email: actor.email, password: actor.password }, undefined, 'body', 'form'));
  expect(envelope.status, String(envelope.data)).toBe(0);
  const token = String(envelope.data[0].Hash);
  plant('session token', token, { issuedIn: exchanges.length - 1 });
  return token;
}

/** The actor's session still works, or a fresh login replaces it (a sweep may log out or change the password). */
async function keepSignedIn(actor: Actor) {
  try {
    await ctx.services.sessions.authenticate(actor.session);
  } catch {
    actor.session = await login(actor);
  }
}

async function ok(actor: Actor, method: string, resource: string, fields: Record<string, string | number>, base = CURRENT) {
  const { envelope } = await send(`${actor.name} ${method} ${resource}`, build(method, `${base}/${resource}.php`, { tz: TZ, ...fields }, actor.session, 'query', 'form'), actor.session);
  expect(envelope.status, `${method} ${resource}: ${String(envelope.data)}`).toBe(0);
  return envelope.data;
}

/** One of everything a user can own, through the API, with a provider key of their own. */
async function setUp(actor: Pick<Actor, 'name' | 'id' | 'email' | 'password' | 'session'>): Promise<Actor> {
  const a = actor as Actor;
  await ok(a, 'POST', 'subscriptions', { app: 'forecast' });
  const job = (await ok(a, 'POST', 'jobs', { app_name: 'forecast', newTraining: 1, description: 'canary' })) as { job_id: number; training_id: number };
  a.jobId = job.job_id;
  a.trainingId = job.training_id;
  const upload = await send(`${a.name} upload`, build('POST', `${CURRENT}/data.php?tz=${TZ}`, { job_id: a.jobId }, a.session, 'body', 'multipart', [{ field: 'Servicefile', filename: 'data.csv', content: CSV }]), a.session);
  expect(upload.envelope.status, String(upload.envelope.data)).toBe(0);
  a.spareJobId = ((await ok(a, 'POST', 'jobs', { app_name: 'forecast', training_id: a.trainingId })) as { job_id: number }).job_id;
  a.appId = Number(await ok(a, 'POST', 'app', { app_id: 'forecast' }));
  await ok(a, 'POST', 'stat', { name: 'canary', host: 'canary-host', pid: 7, job_id: a.jobId });
  await ok(a, 'POST', 'netw', { query: '{"w":[1,2]}', training_id: a.trainingId });
  a.clientId = Number(await ok(a, 'POST', 'client', { provider_key: newProviderKey(), data: JSON.stringify({ CompanyName: `${a.name} SL` }) }));
  // The client's membership is read at login.
  a.session = await login(a);
  a.usecaseId = Number(await ok(a, 'POST', 'usecase', { client_id: a.clientId, data: JSON.stringify({ Description: 'canary', Welcome: 'Hi' }) }));
  a.sentenceId = Number(await ok(a, 'POST', 'sentence', { text: 'You are helpful.', usca_id: a.usecaseId, tokens: 1 }));
  a.chatHash = `canary-chat-${a.id}`;
  a.chatId = Number(await ok(a, 'POST', 'chat', { usca_id: a.usecaseId, user_id: a.id, hash: a.chatHash }));
  await ok(a, 'POST', 'sentence', { chat_id: a.chatId, text: 'Hello there', role: 1 });
  await ok(a, 'POST', 'logs', { message: 'canary log', PID: 1 });
  return a;
}

// ---------- values, by parameter name ----------

/** The secrets go in where the operation takes them; everything else gets the shared plausible values. */
function valueFor(name: string, route: AppRoute, actor: Actor): string | number | undefined {
  const resource = route.url.split('/').pop()!.replace('.php', '');
  switch (name) {
    case 'email':
      return resource === 'users' && route.method === 'POST' ? `canary-new-${hex(4)}@example.com` : actor.email;
    case 'password':
      return resource === 'users' ? newPassword() : actor.password;
    case 'current_password':
      return actor.password;
    case 'provider_key':
      return newProviderKey();
    default:
      return plausibleValue(name, route, actor);
  }
}

/** Reads first, then writes; what ends a session or changes a password comes last (the actor signs in again after). */
function sweepOrder(routes: AppRoute[]): AppRoute[] {
  const rank = (r: AppRoute) => {
    const ending = /\/(session|sessions|passwords|users)\.php$/.test(r.url) && r.method !== 'GET' && !(r.method === 'POST' && /sessions\.php$/.test(r.url));
    return (ending ? 10 : 0) + ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].indexOf(r.method);
  };
  return [...routes].sort((a, b) => rank(a) - rank(b));
}

/** Replies per route, to show that the canary sessions reached every operation past its session guard. */
const passedGuard = new Map<string, number>();
/** Operations that succeeded at least once in the sweep: how deep the canaries went. */
const succeeded = new Set<string>();

/** Every operation once with the session in the query string, once elsewhere (header, cookie, body) with a JSON body. */
async function sweep(actor: Actor) {
  let turn = 0;
  for (const pass of ['query', 'other'] as const) {
    for (const route of sweepOrder(ROUTES)) {
      await keepSignedIn(actor);
      const fields: Record<string, string | number> = {};
      let next: string | undefined;
      for (const name of new Set(route.params)) {
        if (name === 'new_password' || name === 'new_password_repeat') {
          next ??= newPassword();
          fields[name] = next;
          continue;
        }
        if (route.upload && name.toLowerCase() === 'servicefile') continue;
        const value = valueFor(name, route, actor);
        if (value !== undefined) fields[name] = value;
      }
      const place: Place = pass === 'query' ? 'query' : (['bearer', 'cookie', 'body'] as const)[turn++ % 3]!;
      const encoding: Encoding = route.upload ? 'multipart' : pass === 'query' ? 'form' : 'json';
      const files = route.upload ? [{ field: 'Servicefile', filename: 'data.csv', content: CSV }] : [];
      const { envelope } = await send(`${actor.name} sweep (${pass})`, build(route.method, route.url, fields, actor.session, place, encoding, files), actor.session);
      const key = `${route.method} ${route.url}`;
      if (!GUARD_REFUSALS.includes(String(envelope.data))) passedGuard.set(key, (passedGuard.get(key) ?? 0) + 1);
      if (Number(envelope.status) === 0) succeeded.add(key);
      else if (process.env.CANARY_STATS) console.log(`${actor.name} ${key}: ${String(envelope.data).slice(0, 120)}`);
      if (next && Number(envelope.status) === 0) actor.password = next;
    }
  }
}

// ---------- the run ----------

let consumer: Actor;
let admin: Actor;

beforeAll(async () => {
  const email = `canary-${hex(4)}@example.com`;
  const password = newPassword();
  // Registration through HTTP: the password travels in a request the service must not echo or log.
  const registered = await send('registration', build('POST', `${CURRENT}/users.php`, { name: 'Canary', lastname: 'Tester', email, password, phonenumber: '600000000' }, undefined, 'body', 'form'));
  expect(registered.envelope.status, String(registered.envelope.data)).toBe(0);
  const id = Number((await ctx.database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id);
  consumer = await setUp({ name: 'consumer', id, email, password, session: await login({ name: 'consumer', email, password }) });

  const adminEmail = `canary-admin-${hex(4)}@example.com`;
  const adminPassword = newPassword();
  const adminId = await ctx.services.users.register({ name: 'Canary', lastname: 'Admin', email: adminEmail, password: adminPassword, phone: '600000000' }, 'admin');
  admin = await setUp({ name: 'admin', id: adminId, email: adminEmail, password: adminPassword, session: await login({ name: 'admin', email: adminEmail, password: adminPassword }) });
});

describe('canary secrets', () => {
  it('the scan finds a planted canary in a reply body, a header, a log line and an e-mail, and allows only the legitimate places', () => {
    const key = 'sk-selftest0123456789abcdefQZXW';
    const session = randomBytes(32).toString('base64url');
    const own: Canary[] = [
      { kind: 'provider key', value: key, needles: [key, ...pieces(key.slice(3, -4))] },
      { kind: 'session token', value: session, needles: [session, ...pieces(session)], issuedIn: 0 },
    ];
    const reply = (over: Partial<Exchange>): Exchange => ({ label: 'x', method: 'POST', url: '/x.php', statusCode: 200, headers: '{}', body: '{"status":0,"data":[]}', ...over });
    // Legitimate: the issuing login reply, and the session check that presented the token.
    expect(findLeaks(own, [reply({ body: session, headers: `session=${session}` }), reply({ method: 'GET', url: '/api/x/sessions.php?session=...', presented: session, body: session })], [], [])).toEqual([]);
    // A masked key is no leak; a truncated copy is.
    expect(findLeaks(own, [reply({}), reply({ body: 'sk-...QZXW' })], [], [])).toEqual([]);
    const found = findLeaks(
      own,
      [reply({}), reply({ body: `Incorrect API key provided: ${key.slice(0, 20)}***` }), reply({ headers: `{"x":"${session}"}` }), reply({ method: 'GET', url: '/sessions.php', presented: 'other', body: session })],
      [`{"url":"/x.php?session=${session}"}`],
      [{ to: 'a@example.com', subject: 'Hi', text: `key ${key}` }],
    );
    expect(found.map((l) => `${l.kind} @ ${l.where.split(' (')[0]}`)).toEqual([
      'provider key @ reply body of x',
      'session token @ reply headers of x',
      'session token @ reply body of x',
      'session token @ log line 0',
      'provider key @ e-mail 0 to a@example.com',
    ]);
  });

  it('uses each provider key with its provider, and survives the provider echoing the key in its errors', async () => {
    stub.requests.length = 0;
    await ok(consumer, 'POST', 'sentence', { chat_id: consumer.chatId, text: 'Are you there?', role: 1 });
    const key = canaries.filter((c) => c.kind === 'provider key')[0]!.value;
    expect(stub.requests.map((r) => r.authorization)).toContain(`Bearer ${key}`);

    // Like OpenAI, the stub's 401 names the key it was given: the service must not pass it on.
    for (const mode of ['401', '500'] as const) {
      stub.state.mode = mode;
      const said = await send(`sentence with provider ${mode}`, build('POST', `${CURRENT}/sentence.php`, { tz: TZ, chat_id: consumer.chatId, text: 'Still there?', role: 1 }, consumer.session, 'bearer', 'form'), consumer.session);
      expect(Number(said.envelope.status), JSON.stringify(said.envelope)).toBe(1);
      const prompt = await send(`aichat with provider ${mode}`, build('POST', `${CURRENT}/aichat.php`, { tz: TZ, prompt: 'Hello' }, consumer.session, 'query', 'form'), consumer.session);
      expect(prompt.envelope.status).toBe(1);
      const streamed = build('POST', `${CURRENT}/aichat.php`, { tz: TZ, prompt: 'Hello' }, consumer.session, 'cookie', 'json');
      const stream = await send(`streamed aichat with provider ${mode}`, { ...streamed, headers: { ...streamed.headers, accept: 'text/event-stream' } }, consumer.session);
      expect(stream.envelope.status).toBe(1);
    }
    stub.state.mode = 'ok';
    const answered = await send('aichat', build('POST', `${CURRENT}/aichat.php`, { tz: TZ, prompt: 'Hello' }, consumer.session, 'query', 'form'), consumer.session);
    expect(answered.envelope).toEqual({ status: 0, data: stub.state.reply });
    // The 401 reached the service with the key in it, so the scan below is meaningful for this path.
    expect(stub.requests.length).toBeGreaterThan(4);
  });

  it('recovers and changes passwords in both versions with the tokens only in their e-mails', async () => {
    for (const base of [CURRENT, OLDER]) {
      const before = ctx.mail.messages.length;
      const asked = await send(`recovery request (${base})`, build('POST', `${base}/passwords.php`, { email: consumer.email }, undefined, 'body', 'form'));
      expect(asked.envelope).toEqual({ status: 0, data: 'success' });
      const mail = await ctx.mail.waitFor(consumer.email, before);
      const token = /recovery token with PUT \/passwords: (\S+)/.exec(mail.text)![1]!;
      plant('recovery token', token, { mailedIn: ctx.mail.messages.indexOf(mail) });

      const next = newPassword();
      const mismatch = await send(`reset with a mismatch (${base})`, build('PUT', `${base}/passwords.php`, { token, new_password: next, new_password_repeat: newPassword() }, undefined, 'body', 'form'));
      expect(mismatch.envelope.status).toBe(1);
      // The token in the query string, where an access log would see it.
      const reset = await send(`reset (${base})`, build('PUT', `${base}/passwords.php?token=${encodeURIComponent(token)}`, { new_password: next, new_password_repeat: next }, undefined, 'body', 'form'));
      expect(reset.envelope, JSON.stringify(reset.envelope)).toEqual({ status: 0, data: 'success' });
      const again = await send(`reset again (${base})`, build('PUT', `${base}/passwords.php`, { token, new_password: next, new_password_repeat: next }, undefined, 'body', 'json'));
      expect(again.envelope.status).toBe(1);
      consumer.password = next;
      consumer.session = await login(consumer, base);

      const wrong = await send(`login with a wrong password (${base})`, build('POST', `${base}/sessions.php`, { email: consumer.email, password: newPassword() }, undefined, 'body', 'json'));
      expect(wrong.envelope.status).toBe(1);
      const badChange = await send(`change with a wrong current password (${base})`, build('PUT', `${base}/passwords.php`, { current_password: newPassword(), new_password: next, new_password_repeat: next }, consumer.session, 'query', 'form'), consumer.session);
      expect(badChange.envelope.status).toBe(1);
      const changedTo = newPassword();
      const changed = await send(`change (${base})`, build('PUT', `${base}/passwords.php`, { current_password: consumer.password, new_password: changedTo, new_password_repeat: changedTo }, consumer.session, 'bearer', 'form'), consumer.session);
      expect(changed.envelope, JSON.stringify(changed.envelope)).toEqual({ status: 0, data: 'success' });
      consumer.password = changedTo;
      await keepSignedIn(consumer);
    }
  });

  it('drives every operation of both versions with the canary sessions, as a consumer and as an administrator', { timeout: 300_000 }, async () => {
    await sweep(consumer);
    await sweep(admin);
    // Probes and the OpenAPI page, with a session in the query string too.
    for (const url of ['/healthz', '/readyz', '/metrics', '/docs/json']) {
      const res = await ctx.app.inject({ method: 'GET', url: `${url}?session=${admin.session}` });
      exchanges.push({ label: `probe ${url}`, method: 'GET', url, presented: admin.session, statusCode: res.statusCode, headers: JSON.stringify(res.headers), body: res.body });
    }
    const missed = ROUTES.map((r) => `${r.method} ${r.url}`).filter((key) => !passedGuard.has(key));
    expect(missed, 'operations no canary session got past the guard of').toEqual([]);
    expect(ROUTES.length).toBeGreaterThan(70);
    // Most operations succeed (74 of 89 on the day this was written; the rest need a trained job's output or refuse on state).
    expect(succeeded.size, `succeeded: ${[...succeeded].join(', ')}`).toBeGreaterThanOrEqual(70);
  });

  it('finds no canary in any reply body, reply header, log line or e-mail outside the places allowed', async () => {
    // Recovery mails the sweep asked for: each token is a canary allowed in its own e-mail only.
    await new Promise((resolve) => setTimeout(resolve, 300));
    ctx.mail.messages.forEach((mail, i) => {
      const token = /recovery token with PUT \/passwords: (\S+)/.exec(mail.text)?.[1];
      if (token && !canaries.some((c) => c.value === token)) plant('recovery token', token, { mailedIn: i });
    });
    const counts = Object.fromEntries(['provider key', 'password', 'session token', 'recovery token'].map((k) => [k, canaries.filter((c) => c.kind === k).length]));
    expect(counts['session token']).toBeGreaterThan(10);
    expect(counts['recovery token']).toBeGreaterThanOrEqual(2);
    expect(counts['provider key']).toBeGreaterThan(4);
    expect(counts.password).toBeGreaterThan(8);
    expect(ctx.logLines.length).toBeGreaterThan(exchanges.length);
    const leaks = findLeaks(canaries, exchanges, ctx.logLines, ctx.mail.messages);
    expect(leaks.map((l) => `${l.kind} in ${l.where}: ...${l.excerpt}...`)).toEqual([]);

    // The allowed places are really used: each session token in the reply that issued it (body and cookie).
    for (const c of canaries.filter((x) => x.kind === 'session token')) {
      const issued = exchanges[c.issuedIn!]!;
      expect(issued.body).toContain(c.value);
      expect(issued.headers).toContain(`session=${c.value}`);
    }
    for (const c of canaries.filter((x) => x.kind === 'recovery token')) expect(ctx.mail.messages[c.mailedIn!]!.text).toContain(c.value);
  });
});
