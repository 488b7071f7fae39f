import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/domain/accounts/secrets.js';
import { factories } from '../support/factories.js';
import { CURRENT, createTestContext, form, multipart, type TestContext, type TestUser } from '../support/helper.js';
import { enumerateRoutes, type AppRoute } from '../support/routes.js';
import { LEAK_PATTERN, fuzzRequest, type FuzzRequest, type FuzzWorld } from './arbitraries.js';

/**
 * Property fuzzing of every route of both versions (docs/fuzz.md): hostile parameters, bodies and
 * sessions must always get a well-formed envelope below HTTP 500 that leaks nothing, and must leave
 * every row of the other users (a victim consumer and an administrator) exactly as it was.
 * FUZZ_RUNS (runs per route) and FUZZ_SEED make a long or a reproducible run.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 20);
const SEED = Number(process.env.FUZZ_SEED ?? 20_220_301);
/** A request without a reply by then hangs: a failure in itself. */
const REPLY_LIMIT_MS = 10_000;
const TZ = 'Europe/Madrid';
/** The SECRET_KEY createTestContext gives the services (test/support/helper.ts). */
const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdef0123456789';
const VICTIM_KEY = 'sk-victim-provider-key-0123456789QVKZ';
const ADMIN_KEY = 'sk-admin-provider-key-9876543210JWXY';
const FUZZER_KEY = 'sk-fuzzer-own-provider-key-5555555555PLMN';
const CSV = 'year,month,day,store,sales\n2021,1,1,A,10\n2021,1,2,B,20\n2021,1,3,A,\n';

// ---------- a local LLM stub, so /aichat.php runs its whole path without the network ----------

const llm: Server = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => {
    let stream = false;
    try {
      stream = Boolean((JSON.parse(raw) as { stream?: boolean }).stream);
    } catch {
      // An unparsable request is answered like any other.
    }
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage })}\n\n`);
      return res.end('data: [DONE]\n\n');
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage }));
  });
});
await new Promise<void>((resolve) => llm.listen(0, '127.0.0.1', resolve));

// Top-level, so the routes can be enumerated from the real app while tests are collected.
const ctx: TestContext = await createTestContext({
  env: { LLM_BASE_URL: `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`, LLM_TIMEOUT_MS: '2000' },
});

// ---------- the routes, from the app itself ----------

type FuzzRoute = AppRoute;

const ROUTES = enumerateRoutes(ctx.app);

// ---------- people and their data ----------

let fuzzer: TestUser;
let victim: TestUser;
let admin: TestUser;
let fuzzerToken: string;
let world: FuzzWorld;
let victimClients: number[];
let secrets: string[];
let baseline: Map<string, string>;

async function call(user: TestUser, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', resource: string, fields: Record<string, string | number> = {}) {
  const res = await ctx.request({ method, url: `${CURRENT}/${resource}.php`, ...form({ session: user.session, tz: TZ, ...fields }) });
  if (res.envelope.status !== 0) throw new Error(`seeding ${method} ${resource} failed: ${String(res.envelope.data)}`);
  return res.envelope.data as unknown;
}

/** One of everything a user can own, created through the API; answers the ids. */
async function seed(user: TestUser, providerKey: string) {
  await call(user, 'POST', 'subscriptions', { app: 'forecast' });
  const { job_id: jobId, training_id: trainingId } = (await call(user, 'POST', 'jobs', { app_name: 'forecast', newTraining: 1, description: 'seed' })) as { job_id: number; training_id: number };
  const upload = await ctx.request({ method: 'POST', url: `${CURRENT}/data.php?tz=${TZ}`, ...multipart({ session: user.session, job_id: jobId }, [{ field: 'Servicefile', filename: 'data.csv', content: CSV }]) });
  if (upload.envelope.status !== 0) throw new Error(`seeding upload failed: ${String(upload.envelope.data)}`);
  const second = (await call(user, 'POST', 'jobs', { app_name: 'forecast', training_id: trainingId })) as { job_id: number };
  const appId = (await call(user, 'POST', 'app', { app_id: 'forecast' })) as number;
  const statId = (await call(user, 'POST', 'stat', { name: 'seed', host: 'seed-host', pid: 7, job_id: jobId })) as number;
  const netId = (await call(user, 'POST', 'netw', { query: '{"w":[1,2]}', training_id: trainingId })) as number;
  const clientId = (await call(user, 'POST', 'client', { provider_key: providerKey, data: JSON.stringify({ CompanyName: `${user.role} SL` }) })) as number;
  // The client's membership is read at login: a fresh session sees it. Both sessions stay valid.
  const first = user.session;
  user.session = await ctx.login(user.email, user.password);
  const usecaseId = (await call(user, 'POST', 'usecase', { client_id: clientId, data: JSON.stringify({ Description: 'seed', Welcome: 'Hi' }) })) as number;
  const sentenceId = (await call(user, 'POST', 'sentence', { text: 'You are helpful.', usca_id: usecaseId, tokens: 1 })) as number;
  const chatId = (await call(user, 'POST', 'chat', { usca_id: usecaseId, user_id: user.id, hash: `seed-${user.id}` })) as number;
  const chatSentenceId = (await call(user, 'POST', 'sentence', { chat_id: chatId, text: 'Hello there', role: 1 })) as number;
  await call(user, 'POST', 'logs', { message: 'seed log', PID: 1 });
  await ctx.database.db.insertInto('consumptions').values({ user_id: user.id, job_id: jobId, training_id: trainingId, app_name: 'forecast', ram: 1, cpu: 1, disk: 1 }).execute();
  return { clientId, sessions: [first, user.session], ids: [jobId, second.job_id, trainingId, appId, statId, netId, clientId, usecaseId, sentenceId, chatId, chatSentenceId].map(Number) };
}

/** Every row that belongs to the victims, as text: any difference after fuzzing is a breach of scope. */
async function victimState(): Promise<Map<string, string>> {
  const db = ctx.database.db;
  const users = sql.join([victim.id, admin.id]);
  const clients = sql.join(victimClients);
  const queries: Record<string, ReturnType<typeof sql>> = {
    users: sql`select * from users where id in (${users}) order by id`,
    // last_seen_at/expires_at slide when a victim uses its session; who owns which session must not change.
    sessions: sql`select id, user_id, token_hash, ended_at from sessions where user_id in (${users}) order by id`,
    subscriptions: sql`select * from subscriptions where user_id in (${users}) order by id`,
    consumptions: sql`select * from consumptions where user_id in (${users}) order by id`,
    trainings: sql`select * from trainings where user_id in (${users}) order by id`,
    jobs: sql`select * from jobs where user_id in (${users}) order by id`,
    datasets: sql`select * from datasets where job_id in (select id from jobs where user_id in (${users})) order by id`,
    app_records: sql`select * from app_records where user_id in (${users}) order by id`,
    stat_records: sql`select * from stat_records where user_id in (${users}) order by id`,
    network_weights: sql`select * from network_weights where user_id in (${users}) order by id`,
    // Anyone may ask for a recovery e-mail for any address (spec 4.1); the service notes it under that user.
    logs: sql`select id, user_id, text from logs where user_id in (${users}) and text not like 'Password recovery sent to user %' order by id`,
    clients: sql`select * from clients where id in (${clients}) or created_by in (${users}) order by id`,
    client_members: sql`select id from users where client_id in (${clients}) order by id`,
    usecases: sql`select * from usecases where client_id in (${clients}) order by id`,
    sentences: sql`select * from sentences where client_id in (${clients}) order by id`,
    usecase_sentences: sql`select * from usecase_sentences where usecase_id in (select id from usecases where client_id in (${clients})) order by usecase_id, sentence_id`,
    chats: sql`select * from chats where usecase_id in (select id from usecases where client_id in (${clients})) order by id`,
    chat_sentences: sql`select * from chat_sentences where chat_id in (select id from chats where usecase_id in (select id from usecases where client_id in (${clients}))) order by id`,
  };
  const state = new Map<string, string>();
  for (const [name, query] of Object.entries(queries)) state.set(name, JSON.stringify((await query.execute(db)).rows));
  const datasets = await db.selectFrom('datasets').innerJoin('jobs', 'jobs.id', 'datasets.job_id').select('datasets.id').where('jobs.user_id', 'in', [victim.id, admin.id]).execute();
  for (const { id } of datasets) {
    const { rows } = await sql<{ n: string }>`select count(*) as n from ${sql.table(`data_rows_${Number(id)}`)}`.execute(db);
    state.set(`data_rows_${id}`, String(rows[0]?.n));
  }
  return state;
}

async function expectVictimsUnchanged(after: string) {
  const now = await victimState();
  const changed = [...new Set([...baseline.keys(), ...now.keys()])].filter((name) => now.get(name) !== baseline.get(name));
  const report = changed.map((name) => `${name}: ${baseline.get(name) ?? '(none)'}\n  -> ${now.get(name) ?? '(none)'}`);
  // Each route answers for its own changes only, not for those of an earlier one.
  baseline = now;
  if (report.length > 0) throw new Error(`rows of other users changed after ${after}:\n${report.join('\n')}`);
}

/** The fuzzer may log itself out (DELETE /session.php with its own id): sign in again so guards stay passable. */
async function keepFuzzerSignedIn() {
  try {
    await ctx.services.sessions.authenticate(fuzzerToken);
  } catch {
    // Fuzzed logins with the fuzzer's e-mail and wrong passwords may have locked the account: unlock it.
    await ctx.database.db.deleteFrom('auth_attempts').where('subject', '=', fuzzer.email.toLowerCase()).execute();
    fuzzerToken = (await ctx.services.sessions.login(fuzzer.email, fuzzer.password)).token;
  }
}

beforeAll(async () => {
  fuzzer = await ctx.createUser({ name: 'Fuzzer', password: 'Fuzzer-Passw0rd!' });
  victim = await ctx.createUser({ name: 'Victim', password: 'Victim-Secret-Pw-771' });
  admin = await ctx.createUser({ role: 'admin', name: 'Admin', password: 'Admin-Secret-Pw-993' });
  const own = await seed(fuzzer, FUZZER_KEY);
  const victims = await seed(victim, VICTIM_KEY);
  const admins = await seed(admin, ADMIN_KEY);
  fuzzerToken = fuzzer.session;
  victimClients = [victims.clientId, admins.clientId];
  world = {
    ownIds: own.ids,
    otherIds: [...victims.ids, ...admins.ids],
    userIds: [fuzzer.id, victim.id, admin.id],
    emails: [fuzzer.email, victim.email, admin.email],
  };
  const hint = (key: string) => `sk-...${key.slice(-4)}`;
  const otherSessions = [...victims.sessions, ...admins.sessions];
  secrets = [
    ...otherSessions,
    ...otherSessions.map(hashToken),
    victim.password,
    admin.password,
    VICTIM_KEY,
    ADMIN_KEY,
    FUZZER_KEY,
    hint(VICTIM_KEY),
    hint(ADMIN_KEY),
    TEST_SECRET_KEY,
  ];
  baseline = await victimState();
});

afterAll(async () => {
  await ctx.close();
  await new Promise<void>((resolve) => llm.close(() => resolve()));
});

// ---------- from a symbolic request to bytes ----------

const asText = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return '';
};

/** Percent-encodes UTF-16 code units, lone surrogates included (as the invalid 3-byte UTF-8 a browser would never send). */
function percent(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    let out = '';
    for (const ch of text) {
      const code = ch.codePointAt(0)!;
      if (code >= 0xd800 && code <= 0xdfff) {
        out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
      } else {
        out += encodeURIComponent(ch);
      }
    }
    return out;
  }
}

const urlencode = (pairs: [string, unknown][]) => pairs.map(([k, v]) => `${percent(k)}=${percent(asText(v))}`).join('&');

function toInject(route: FuzzRoute, req: FuzzRequest, token: string): InjectOptions {
  const session = req.session.token === 'valid' ? token : req.session.token.garbage;
  const params: [string, unknown][] = [...req.params];
  const query: [string, unknown][] = [];
  const headers: Record<string, string> = {};
  switch (req.session.where) {
    case 'param':
      params.unshift(['session', session]);
      break;
    case 'query':
      query.push(['session', session]);
      break;
    case 'cookie':
      headers.cookie = `session=${percent(session)}`;
      break;
    case 'bearer':
      // A header carries latin1 only; anything else goes percent-encoded, as a client library would.
      headers.authorization = `Bearer ${/^[\x20-\x7e]*$/.test(session) ? session : percent(session)}`;
      break;
    case 'twice':
      // A stale value and then the valid one: the last wins, as in PHP.
      params.unshift(['session', 'stale-session-value'], ['session', session]);
      break;
    case 'none':
      break;
  }
  const inQuery = route.method === 'GET' || req.encoding === 'query' || req.encoding === 'no-body';
  if (inQuery) query.push(...params);
  const url = query.length > 0 ? `${route.url}?${urlencode(query)}` : route.url;
  if (req.accept) headers.accept = req.accept;
  const base: InjectOptions = { method: route.method, url, headers };
  if (inQuery) {
    if (req.encoding === 'no-body') headers['content-type'] = 'application/json';
    return base;
  }
  const last = Object.fromEntries(params.map(([k, v]) => [k, v]));
  const json = JSON.stringify(last);
  switch (req.encoding) {
    case 'form':
      return { ...base, payload: urlencode(params), headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' } };
    case 'json':
      return { ...base, payload: json, headers: { ...headers, 'content-type': 'application/json' } };
    case 'json-duplicate-keys':
      return { ...base, payload: `{${params.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`, headers: { ...headers, 'content-type': 'application/json' } };
    case 'multipart':
    case 'multipart-cut': {
      const body = multipart(Object.fromEntries(params.map(([k, v]) => [k, asText(v)])), req.files);
      if (req.encoding === 'multipart') return { ...base, payload: body.payload, headers: { ...headers, ...body.headers } };
      const cut = body.payload.subarray(0, Math.floor(req.cut.at * body.payload.length));
      const length = req.cut.contentLength === 'cut' ? { 'content-length': String(cut.length) } : req.cut.contentLength === 'full' ? { 'content-length': String(body.payload.length) } : {};
      return { ...base, payload: cut, headers: { ...headers, ...body.headers, ...length } };
    }
    case 'text/plain': {
      const variants = [urlencode(params), json, Buffer.from(req.garbage).toString('latin1')];
      return { ...base, payload: variants[(req.garbage[0] ?? 0) % 3], headers: { ...headers, 'content-type': 'text/plain' } };
    }
    case 'application/xml': {
      const xml = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>${params.map(([k, v]) => `<${k}>${asText(v)}</${k}>`).join('')}&x;</r>`;
      return { ...base, payload: xml, headers: { ...headers, 'content-type': 'application/xml' } };
    }
    case 'application/octet-stream':
      return { ...base, payload: Buffer.concat([Buffer.from(req.garbage), Buffer.from(json)]), headers: { ...headers, 'content-type': 'application/octet-stream' } };
    case 'malformed-json': {
      const broken = [json.slice(0, Math.floor(json.length / 2)), `${json}}`, json.replace(/"/g, "'"), `{${json}`, '{"a":1,}', '[', 'nul'];
      return { ...base, payload: broken[(req.garbage[0] ?? 0) % broken.length], headers: { ...headers, 'content-type': 'application/json' } };
    }
    case 'odd-content-type': {
      const odd: [string, string][] = [
        ['application/json; charset=utf-16', json],
        ['multipart/form-data', urlencode(params)],
        ['multipart/form-data; boundary=', urlencode(params)],
        ['application/x-www-form-urlencoded', json],
        ['application/json', urlencode(params)],
        ['text/html', `<p>${json}</p>`],
        ['image/png', json],
        ['application/json;;;', json],
      ];
      const [type, payload] = odd[(req.garbage[0] ?? 0) % odd.length]!;
      return { ...base, payload, headers: { ...headers, 'content-type': type } };
    }
    default:
      return base;
  }
}

// ---------- the property ----------

function describeRequest(options: InjectOptions): string {
  const payload = options.payload === undefined ? '' : Buffer.isBuffer(options.payload) ? options.payload.toString('latin1') : typeof options.payload === 'string' ? options.payload : JSON.stringify(options.payload);
  return `${String(options.method)} ${typeof options.url === 'string' ? options.url.slice(0, 300) : ''} ${JSON.stringify(options.headers)} ${payload.slice(0, 1500)}`;
}

/**
 * The reply's envelopes: its JSON body, or for a streamed /aichat.php (docs/interface-notes.md) the envelope
 * of its closing `done` or `error` event, after checking every event's data is JSON.
 */
function envelopesOf(res: LightMyRequestResponse): { envelope: unknown; extraKeys: string[] }[] {
  if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) return [{ envelope: JSON.parse(res.body) as unknown, extraKeys: [] }];
  const events = res.body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => ({ name: /^event: (.*)$/m.exec(block)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as unknown }));
  const last = events.at(-1);
  if (!last || (last.name !== 'done' && last.name !== 'error')) throw new Error('stream does not end with a done or error event');
  return [{ envelope: last.data, extraKeys: ['usage'] }];
}

function checkReply(res: LightMyRequestResponse, leaks: string[]): void {
  if (res.statusCode >= 500) throw new Error(`HTTP ${res.statusCode}: ${res.body.slice(0, 500)}`);
  let envelopes: ReturnType<typeof envelopesOf>;
  try {
    envelopes = envelopesOf(res);
  } catch (error) {
    throw new Error(`reply is not JSON (HTTP ${res.statusCode}, ${(error as Error).message}): ${res.body.slice(0, 300)}`, { cause: error });
  }
  for (const { envelope, extraKeys } of envelopes) {
    if (!envelope || typeof envelope !== 'object' || Array.isArray(envelope)) throw new Error(`not an envelope: ${res.body.slice(0, 300)}`);
    const { status, data } = envelope as { status?: unknown; data?: unknown };
    if (!('data' in envelope) || ![0, 1, '0', '1'].includes(status as number)) throw new Error(`malformed envelope: ${res.body.slice(0, 300)}`);
    if (Object.keys(envelope).some((k) => k !== 'status' && k !== 'data' && !extraKeys.includes(k))) throw new Error(`envelope with extra keys: ${res.body.slice(0, 300)}`);
    if (Number(status) === 1 && (typeof data !== 'string' || data.trim() === '')) throw new Error(`error envelope without a message: ${res.body.slice(0, 300)}`);
  }
  const trace = LEAK_PATTERN.exec(res.body) ?? new RegExp(process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).exec(res.body);
  if (trace) throw new Error(`stack trace or internals in reply ('${trace[0]}'): ${res.body.slice(Math.max(0, trace.index - 150), trace.index + 150)}`);
  const leaked = leaks.find((secret) => res.body.includes(secret));
  if (leaked) throw new Error(`secret leaked (${leaked.slice(0, 8)}...): ${res.body.slice(0, 300)}`);
}

/** With FUZZ_STATS=1, how deep the runs got: per route, successes and the most frequent error messages. */
const stats = new Map<string, Map<string, number>>();
let slowest = 0;
function tally(route: FuzzRoute, res: LightMyRequestResponse) {
  if (!process.env.FUZZ_STATS) return;
  let outcome = 'non-JSON';
  if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) outcome = 'streamed';
  else try {
    const envelope = JSON.parse(res.body) as { status: number; data: unknown };
    outcome = Number(envelope.status) === 0 ? 'OK' : String(envelope.data).replace(/\d+/g, 'N').slice(0, 70);
  } catch {
    // Counted as non-JSON.
  }
  const key = `${route.method} ${route.url}`;
  const counts = stats.get(key) ?? new Map<string, number>();
  counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  stats.set(key, counts);
}
afterAll(() => {
  for (const [route, counts] of stats) {
    if (route === [...stats.keys()][0]) console.log(`slowest reply: ${slowest} ms`);
    const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([what, n]) => `${n}x ${what}`);
    console.log(`${route}: ${top.join(' | ')}`);
  }
});

const routeSeed = (route: FuzzRoute) => [...`${route.method} ${route.url}`].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) | 0, SEED);

describe('the harness itself', () => {
  it("notices a change to another user's rows", async () => {
    await ctx.database.db.updateTable('trainings').set({ description: 'changed behind the fuzzer' }).where('user_id', '=', victim.id).execute();
    // The failed check takes the changed state as the new baseline, so the fuzzing below starts clean.
    await expect(expectVictimsUnchanged('the self-check')).rejects.toThrow(/trainings: /);
    await expectVictimsUnchanged('the self-check');
  });

  it('notices a 500, a malformed envelope, a stack trace and a secret', () => {
    const reply = (statusCode: number, body: string) => ({ statusCode, headers: { 'content-type': 'application/json' }, body }) as unknown as LightMyRequestResponse;
    expect(() => checkReply(reply(500, '{"status":1,"data":"x"}'), secrets)).toThrow(/HTTP 500/);
    expect(() => checkReply(reply(200, '{"status":2,"data":"x"}'), secrets)).toThrow(/malformed envelope/);
    expect(() => checkReply(reply(200, '{"status":1,"data":""}'), secrets)).toThrow(/without a message/);
    expect(() => checkReply(reply(200, 'oops'), secrets)).toThrow(/not JSON/);
    expect(() => checkReply(reply(200, '{"status":1,"data":"Error\\n    at run (/srv/app/src/x.ts:10:5)"}'), secrets)).toThrow(/stack trace/);
    expect(() => checkReply(reply(200, JSON.stringify({ status: 0, data: [{ key: VICTIM_KEY }] })), secrets)).toThrow(/secret leaked/);
    expect(() => checkReply(reply(200, JSON.stringify({ status: 0, data: victim.session })), secrets)).toThrow(/secret leaked/);
    expect(() => checkReply(reply(200, '{"status":"0","data":[]}'), secrets)).not.toThrow();
  });
});

describe('route fuzzing', () => {
  it('finds every route of both versions', () => {
    const ids = ROUTES.map((r) => `${r.method} ${r.url}`);
    expect(ids).toEqual(expect.arrayContaining([`POST ${CURRENT}/sessions.php`, `POST ${CURRENT}/data.php`, 'POST /202111101200/forecasts.php', 'DELETE /202111101200/jobs.php']));
    expect(ids.some((id) => id.includes('/api/202111101200/'))).toBe(false);
    expect(ROUTES.length).toBeGreaterThan(70);
    expect(ROUTES.filter((r) => r.upload).map((r) => r.url)).toEqual([`${CURRENT}/data.php`, '/202111101200/data.php']);
  });

  it.each(ROUTES.map((route) => [`${route.method} ${route.url}`, route] as const))('%s', async (_name, route) => {
    await fc.assert(
      fc.asyncProperty(fuzzRequest(route, world), async (req) => {
        const options = toInject(route, req, fuzzerToken);
        const logged = ctx.logLines.length;
        const started = Date.now();
        let timer: NodeJS.Timeout | undefined;
        const res = await Promise.race([
          ctx.app.inject(options),
          new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new Error(`no reply within ${REPLY_LIMIT_MS} ms\n  request: ${describeRequest(options)}`)), REPLY_LIMIT_MS);
          }),
        ]).finally(() => clearTimeout(timer));
        slowest = Math.max(slowest, Date.now() - started);
        try {
          checkReply(res, secrets);
        } catch (error) {
          const cause = ctx.logLines.slice(logged).find((line) => line.includes('unexpected error'));
          throw new Error(`${(error as Error).message}\n  request: ${describeRequest(options)}${cause ? `\n  logged: ${cause.slice(0, 1500)}` : ''}`, { cause: error });
        }
        tally(route, res);
        if (route.method !== 'GET') await keepFuzzerSignedIn();
      }),
      { numRuns: RUNS, seed: routeSeed(route), endOnFailure: true },
    );
    await expectVictimsUnchanged(`${route.method} ${route.url}`);
  }, 60_000 + RUNS * REPLY_LIMIT_MS);

  it("leaves the other users' sessions working", async () => {
    await expectVictimsUnchanged('the whole run');
    for (const session of secrets.slice(0, 4)) {
      const res = await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${session}` });
      expect(res.envelope).toMatchObject({ status: 0, data: { hash: session } });
    }
  });
});

/** Each bug the fuzzer found, pinned as a plain request so it stays fixed whatever the seed. */
describe('regressions found by the fuzzer', () => {
  const send = async (options: InjectOptions) => {
    const res = await ctx.app.inject(options);
    checkReply(res, secrets);
    return JSON.parse(res.body) as { status: number; data: unknown };
  };
  const auth = () => ({ authorization: `Bearer ${fuzzerToken}` });

  it('answers a multipart body without boundary, or cut short, with an error envelope (was HTTP 500)', async () => {
    const noBoundary = await send({ method: 'POST', url: `${CURRENT}/trainings.php`, headers: { ...auth(), 'content-type': 'multipart/form-data' }, payload: 'tz=UTC' });
    expect(noBoundary).toEqual({ status: 1, data: 'Invalid request: the multipart/form-data body is malformed or cut off' });
    const body = multipart({ tz: TZ, description: 'cut' });
    const cut = await send({ method: 'POST', url: `${CURRENT}/trainings.php`, headers: { ...auth(), ...body.headers }, payload: body.payload.subarray(0, 20) });
    expect(cut).toEqual({ status: 1, data: 'Invalid request: the multipart/form-data body is malformed or cut off' });
  });

  it('answers a multipart form cut inside a stray file part (was no reply at all)', async () => {
    const body = multipart({ tz: TZ, description: 'stray file' }, [{ field: 'Servicefile', filename: 'data.csv', content: 'a,b\n'.repeat(1000) }]);
    const cut = body.payload.subarray(0, body.payload.length - 500);
    const reply = ctx.app.inject({ method: 'POST', url: `${CURRENT}/trainings.php`, headers: { ...auth(), ...body.headers, 'content-length': String(body.payload.length) }, payload: cut });
    const res = await Promise.race([reply, new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('no reply within 5 s')), 5000))]);
    checkReply(res, secrets);
    expect(JSON.parse(res.body)).toEqual({ status: 1, data: 'Invalid request: the multipart/form-data body is malformed or cut off' });
  });

  it('refuses a NUL character in a parameter, naming it (was HTTP 500 from Postgres)', async () => {
    const res = await send({ method: 'POST', url: `${CURRENT}/trainings.php`, headers: auth(), payload: { tz: TZ, description: 'a\u0000b', app_name: 'forecast' } });
    expect(res).toEqual({ status: 1, data: "Invalid parameter 'description': must not contain NUL characters" });
    const login = await send({ method: 'POST', url: '/202111101200/sessions.php', ...form({ email: 'a\u0000b', password: 'x' }) });
    expect(login).toEqual({ status: 1, data: "Invalid parameter 'email': must not contain NUL characters" });
    // Inside a JSON `data` field the parameter reader sees only an escape; the database refuses it.
    const nested = await send({ method: 'POST', url: `${CURRENT}/client.php`, headers: auth(), payload: { tz: TZ, provider_key: 'sk-fuzz-0123456789abcdef0123456789', data: '{"CompanyName":"a\\u0000b"}' } });
    expect(nested).toEqual({ status: 1, data: 'Invalid request: text must not contain NUL characters' });
  });

  it('refuses an id list entry beyond the integer range (was HTTP 500 from Postgres)', async () => {
    const res = await send({ method: 'POST', url: `${CURRENT}/usecase_sentence.php`, headers: auth(), payload: { tz: TZ, usca_id: 2_147_483_648, sent_id: 1 } });
    expect(res).toEqual({ status: 1, data: "Invalid parameter 'usca_id': is too large" });
  });

  it('refuses dates the database cannot hold (was HTTP 500 from Postgres)', async () => {
    for (const url of [`${CURRENT}/consumptions.php?tz=${TZ}&date_to=9999-12-31%2023:59:59`, `${CURRENT}/jobs.php?tz=${TZ}&job_id=0&date_to=9999-12-31`, `${CURRENT}/jobs.php?tz=${TZ}&job_id=0&date_from=0001-01-01`]) {
      const res = await send({ method: 'GET', url, headers: auth() });
      expect(res.status, url).toBe(1);
      expect(res.data, url).toMatch(/^Invalid parameter 'date_(to|from)': must be a date between the years 0002 and 9998$/);
    }
  });

  it('counts the tokens of a 100 KB prompt without spaces (was HTTP 500: stack overflow in the tokenizer)', async () => {
    const prompt = '\u{3FCF1}\u{D7F06}'.repeat(25_000);
    const res = await send({ method: 'POST', url: `${CURRENT}/aichat.php`, headers: auth(), payload: { tz: TZ, prompt, tokens: 1 } });
    expect(res.status).toBe(0);
    expect(res.data).toBeGreaterThan(25_000);
  });

  it('refuses a sentence position at the integer maximum (was HTTP 500: moving Down overflowed)', async () => {
    const res = await send({ method: 'PATCH', url: `${CURRENT}/usecase_sentence.php`, headers: auth(), payload: { tz: TZ, usca_id: 1, order_id: 2_147_483_647, direction: 'Down' } });
    expect(res).toEqual({ status: 1, data: "Invalid parameter 'order_id': is too large" });
  });

  it('refuses a CSV whose header holds a NUL byte (was HTTP 500 from Postgres)', async () => {
    const { jobId } = await factories(ctx.database.db).job(fuzzer);
    const body = multipart({ session: fuzzerToken, job_id: jobId }, [{ field: 'Servicefile', filename: 'data.csv', content: 'a\u0000b,c\n1,2\n' }]);
    const res = await send({ method: 'POST', url: `${CURRENT}/data.php?tz=${TZ}`, ...body });
    expect(res).toEqual({ status: 1, data: "Invalid upload: the header row of 'data.csv' contains a NUL byte (is it a CSV file?)" });
  });

  it("names the request's own content type when refusing it (said 'Unsupported Media Type')", async () => {
    const res = await send({ method: 'POST', url: `${CURRENT}/trainings.php`, headers: { ...auth(), 'content-type': 'application/xml' }, payload: '<r/>' });
    expect(res).toEqual({ status: 1, data: "Unsupported content type 'application/xml'; send a form, multipart/form-data or JSON" });
  });
});
