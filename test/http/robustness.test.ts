import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { CURRENT, createTestContext, form, type TestContext, type TestUser } from '../support/helper.js';
import { startStub } from '../support/openai-stub.js';

/**
 * The HTTP edge (docs/interface-notes.md): a slow, stalled, oversized or hostile client is timed out or
 * refused at the connection, always with the envelope, and never holds anyone else up. Real sockets where the
 * behaviour lives below Fastify; small timeouts so the file stays fast.
 */
const TZ = 'Europe/Madrid';
const BODY_TIMEOUT_MS = 600;
const HEADERS_TIMEOUT_MS = 800;
const KEEP_ALIVE_TIMEOUT_MS = 700;
const LLM_TIMEOUT_MS = 1500;

let ctx: TestContext;
let stub: ReturnType<typeof startStub>;
let port: number;
let user: TestUser;
let other: TestUser;

beforeAll(async () => {
  stub = startStub();
  await stub.listen();
  ctx = await createTestContext({
    env: {
      BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
      HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
      MAX_UPLOAD_MB: '1',
      LLM_BASE_URL: `${stub.url}/v1`,
      LLM_TIMEOUT_MS: String(LLM_TIMEOUT_MS),
    },
  });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  port = (ctx.app.server.address() as AddressInfo).port;
  user = await ctx.createUser();
  other = await ctx.createUser();
});
afterAll(async () => {
  await ctx?.close();
  await stub?.close();
});

interface RawReply {
  status: number;
  headers: Record<string, string>;
  envelope: { status: number; data: unknown };
}

/** A client on a bare socket, so a test controls every byte and sees exactly when the server closes. */
function rawClient() {
  const socket = net.connect(port, '127.0.0.1');
  const started = Date.now();
  let received = Buffer.alloc(0);
  let closedAfter: number | undefined;
  socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
  socket.on('error', () => undefined);
  socket.on('close', () => (closedAfter = Date.now() - started));
  const parse = (): RawReply | undefined => {
    const text = received.toString('utf8');
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    const body = text.slice(end + 4);
    if (Buffer.byteLength(body) < Number(headers['content-length'] ?? 0)) return undefined;
    return { status: Number(statusLine!.split(' ')[1]), headers, envelope: JSON.parse(body) as RawReply['envelope'] };
  };
  return {
    socket,
    connected: new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject)),
    write: (data: string | Buffer) => new Promise<void>((resolve) => socket.write(data, () => resolve())),
    get closedAfter() {
      return closedAfter;
    },
    /** The reply, once complete; fails after `timeoutMs`. */
    async reply(timeoutMs = 5000): Promise<RawReply> {
      await until('a reply', () => parse() !== undefined || closedAfter !== undefined, timeoutMs);
      const reply = parse();
      if (!reply) throw new Error(`connection closed without a reply after ${closedAfter} ms`);
      return reply;
    },
    /** Milliseconds from connecting until the server closed the connection. */
    async closed(timeoutMs = 5000): Promise<number> {
      await until('the server to close the connection', () => closedAfter !== undefined, timeoutMs);
      return closedAfter!;
    },
  };
}

async function until(what: string, check: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Another user's session check over real HTTP. */
async function sessionCheck(who: TestUser) {
  const res = await fetch(`http://127.0.0.1:${port}${CURRENT}/sessions.php?session=${who.session}`, { signal: AbortSignal.timeout(10_000) });
  return (await res.json()) as { status: number };
}

describe('timeouts', () => {
  it('cuts a client that stops sending mid-body after BODY_TIMEOUT_MS, while others are served', async () => {
    const { jobId } = await factories(ctx.database.db).job(user);
    const boundary = `----stall${randomBytes(6).toString('hex')}`;
    const fields = { session: user.session, job_id: jobId };
    const head = Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
    const half = `${head.join('')}--${boundary}\r\nContent-Disposition: form-data; name="Servicefile"; filename="half.csv"\r\nContent-Type: text/csv\r\n\r\nyear,month,x1\n2000,1,5\n2000,2,`;
    const client = rawClient();
    await client.connected;
    await client.write(
      `POST ${CURRENT}/data.php?tz=${TZ} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${Buffer.byteLength(half) * 2}\r\n\r\n${half}`,
    );
    await sleep(BODY_TIMEOUT_MS / 2);
    expect(client.closedAfter).toBeUndefined();
    expect((await sessionCheck(other)).status).toBe(0);
    const closedAfter = await client.closed(BODY_TIMEOUT_MS + 5000);
    expect(closedAfter).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS);
    expect((await sessionCheck(other)).status).toBe(0);
    // The cut upload stored nothing.
    const job = await ctx.database.db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow();
    expect(Number(job.status)).toBe(0);
  });

  it('lets a slow client that keeps sending finish, however long its whole body takes', async () => {
    const body = JSON.stringify({ email: user.email, password: user.password, padding: 'x'.repeat(50) });
    const client = rawClient();
    await client.connected;
    await client.write(`POST ${CURRENT}/sessions.php HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
    // Six pieces, each within the body timeout, together well over it.
    const pieces = 6;
    const size = Math.ceil(body.length / pieces);
    for (let i = 0; i < pieces; i++) {
      await sleep(BODY_TIMEOUT_MS / 3);
      await client.write(body.slice(i * size, (i + 1) * size));
    }
    const reply = await client.reply();
    expect(reply.status).toBe(200);
    expect(reply.envelope.status).toBe(0);
    client.socket.destroy();
  });

  it('never cuts a slow reply once the body is in (a language-model call longer than BODY_TIMEOUT_MS)', async () => {
    const ok = async (resource: string, fields: Record<string, string | number>) => {
      const res = await ctx.request({ method: 'POST', url: `${CURRENT}/${resource}.php`, ...form({ session: user.session, tz: TZ, ...fields }) });
      expect(res.envelope.status, JSON.stringify(res.envelope)).toBe(0);
      return res.envelope.data as number;
    };
    const clientId = await ok('client', { provider_key: 'sk-test-edge-0123456789abcdefWXYZ' });
    const usecase = await ok('usecase', { client_id: clientId, data: JSON.stringify({ Description: 'Edge', Welcome: 'Hi' }) });
    const chatId = await ok('chat', { usca_id: usecase, user_id: user.id });
    stub.state.mode = 'hang';
    try {
      const body = form({ session: user.session, tz: TZ, chat_id: chatId, text: 'Hello?', role: 1 }).payload;
      const client = rawClient();
      await client.connected;
      await client.write(`POST ${CURRENT}/sentence.php HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      const reply = await client.reply(LLM_TIMEOUT_MS + 5000);
      expect(reply.envelope).toEqual({ status: 1, data: `Language-model provider error: timeout, no answer within ${LLM_TIMEOUT_MS} ms` });
      client.socket.destroy();
    } finally {
      stub.state.mode = 'ok';
      stub.releaseHanging();
    }
  });

  it('answers 408 with the envelope to a client whose headers stop coming', async () => {
    const client = rawClient();
    await client.connected;
    await client.write(`GET ${CURRENT}/sessions.php?session=x HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
    const reply = await client.reply(HEADERS_TIMEOUT_MS * 2 + 2000);
    expect(reply.status).toBe(408);
    expect(reply.envelope).toEqual({ status: 1, data: 'Invalid request: the request headers did not arrive within 0.8 seconds' });
    expect(await client.closed()).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
  });

  it('closes an idle keep-alive connection after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const client = rawClient();
    await client.connected;
    await client.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect((await client.reply()).envelope).toEqual({ status: 0, data: 'ok' });
    const closedAfter = await client.closed(KEEP_ALIVE_TIMEOUT_MS + 3000);
    expect(closedAfter).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS);
  });
});

describe('refusals in the envelope', () => {
  it('refuses an announced Content-Length over the upload limit at once, without reading the body', async () => {
    const client = rawClient();
    await client.connected;
    await client.write(
      `POST ${CURRENT}/data.php?tz=${TZ} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${300 * 1024 * 1024}\r\n\r\n`,
    );
    // No byte of the body is sent: the reply must come anyway.
    const reply = await client.reply(2000);
    expect(reply.status).toBe(413);
    expect(reply.headers.connection).toBe('close');
    expect(reply.envelope).toEqual({ status: 1, data: 'Invalid upload: the request announces 300 MB, over the maximum upload size of 1 MB' });
    await client.closed(2000);
  });

  it('refuses an announced body over the limit of requests without files the same way', async () => {
    const client = rawClient();
    await client.connected;
    await client.write(`POST ${CURRENT}/sessions.php HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${20 * 1024 * 1024}\r\n\r\n`);
    const reply = await client.reply(2000);
    expect(reply.status).toBe(413);
    expect(reply.envelope).toEqual({
      status: 1,
      data: 'Invalid upload: the request announces 20 MB, over the maximum of 10 MB for a request without files (send files as multipart/form-data)',
    });
  });

  it('refuses a chunked body once it passes the limit of requests without files, naming that limit', async () => {
    const client = rawClient();
    await client.connected;
    await client.write(`POST ${CURRENT}/sessions.php HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const chunk = Buffer.from(`100000\r\n${' '.repeat(0x100000)}\r\n`);
    for (let i = 0; i < 11 && client.closedAfter === undefined; i++) await client.write(chunk);
    const reply = await client.reply();
    expect(reply.envelope).toEqual({
      status: 1,
      data: 'Invalid upload: the request exceeds the maximum of 10 MB for a request without files (send files as multipart/form-data)',
    });
    client.socket.destroy();
  });

  it('answers a 100 KB query string with the envelope and HTTP 431', async () => {
    const client = rawClient();
    await client.connected;
    await client.write(`GET ${CURRENT}/sessions.php?session=x&${'a'.repeat(100 * 1024)}=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const reply = await client.reply();
    expect(reply.status).toBe(431);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(reply.envelope).toEqual({ status: 1, data: 'Invalid request: the request line and headers exceed 16 KB; send long parameters in the body' });
  });

  it('answers malformed JSON with the envelope, as application/json and as text/plain', async () => {
    for (const type of ['application/json', 'text/plain']) {
      const res = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, headers: { 'content-type': type }, payload: '{"email": "a@b.c", "password": ' });
      expect(res.statusCode).toBe(200);
      expect(res.envelope).toEqual({ status: 1, data: "Invalid parameter 'body': is not valid JSON" });
    }
  });

  it("refuses '__proto__' and 'constructor.prototype' keys in JSON bodies", async () => {
    const poisoned = [
      `{"email": "${user.email}", "password": "${user.password}", "__proto__": {"role": "admin"}}`,
      `{"email": "${user.email}", "password": "${user.password}", "nested": {"constructor": {"prototype": {"role": "admin"}}}}`,
    ];
    for (const payload of poisoned) {
      for (const type of ['application/json', 'text/plain']) {
        const res = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, headers: { 'content-type': type }, payload });
        expect(res.statusCode).toBe(200);
        expect(res.envelope).toEqual({ status: 1, data: "Invalid parameter 'body': must not contain the key '__proto__' or 'constructor.prototype'" });
      }
    }
  });

  it('cuts a megabyte-long parameter name in the reply and in the log', async () => {
    const name = 'n'.repeat(1024 * 1024);
    const bodies = [
      { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: user.email, password: 'x', [name]: 'nul\u0000' }) },
      { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `email=${encodeURIComponent(user.email)}&password=x&${name}=nul%00` },
    ];
    for (const body of bodies) {
      const logged = ctx.logLines.length;
      const res = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, ...body });
      expect(res.envelope).toEqual({ status: 1, data: `Invalid parameter '${'n'.repeat(64)}…': must not contain NUL characters` });
      expect(ctx.logLines.slice(logged).join('')).not.toContain('n'.repeat(65));
    }
  });

  it('keeps a 12 KB query string out of the reply and cuts it in the log', async () => {
    const logged = ctx.logLines.length;
    const res = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php?${'q'.repeat(12 * 1024)}=nul%00`, ...form({ email: user.email, password: 'x' }) });
    expect(res.envelope).toEqual({ status: 1, data: `Invalid parameter '${'q'.repeat(64)}…': must not contain NUL characters` });
    const lines = ctx.logLines.slice(logged).join('');
    expect(lines).toContain('q'.repeat(900));
    expect(lines).not.toContain('q'.repeat(1001));
  });
});
