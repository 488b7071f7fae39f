import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { CURRENT, OLDER, createTestContext, type TestContext, type TestUser } from '../support/helper.js';

/**
 * Refusals that reach the client at once (docs/interface-notes.md): a refusal decided before the body is read
 * reaches a client that sends its whole body before reading (curl with `Expect:` off, Python's http.client, a
 * front end) at once, not when BODY_TIMEOUT_MS fires: the envelope goes out with `Connection: close` and what
 * is still coming is read and dropped (a lingering close) within a time and a byte bound. Real sockets: the
 * behaviour lives in how the socket is read and closed.
 */
const TZ = 'Europe/Madrid';
const HEADER = 'year,month,x1,x2,demand\n';
const BODY_MB = 20;

/** About 20 MB of CSV rows (no header), made once: the body every refusal below is sent with. */
const ROWS = (() => {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < BODY_MB * 1024 * 1024; i++) {
    const line = `${2000 + Math.floor(i / 12)},${(i % 12) + 1},${i % 20},${i % 10},${i % 97}\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join(''));
})();

/** The rows with line `n` of the file (the header is line 1) cut to three fields. */
function withBadRecord(n: number): Buffer[] {
  let at = -1;
  for (let line = 2; line < n; line++) at = ROWS.indexOf(10, at + 1);
  const next = ROWS.indexOf(10, at + 1);
  return [ROWS.subarray(0, at + 1), Buffer.from('2000,1,1\n'), ROWS.subarray(next + 1)];
}

interface Sent {
  /** Milliseconds from the first byte written until the reply was complete. */
  ms: number;
  /** Body bytes the server took before it closed (all of them unless a bound cut the client). */
  written: number;
  total: number;
  status: number;
  headers: Record<string, string>;
  envelope: { status: number; data: unknown };
  /** The server closed the connection after the reply. */
  closed: boolean;
}

/**
 * A client that writes the whole request and reads nothing until it is written (it waits for the
 * socket to drain, as a blocking send does), then reads the reply. Gives up after `timeoutMs`.
 */
async function sendWholeThenRead(
  port: number,
  url: string,
  fields: [string, string | number][],
  file: { field: string; header: string; rows: Buffer[] },
  timeoutMs = 10_000,
): Promise<Sent> {
  const boundary = `----refusal${randomBytes(6).toString('hex')}`;
  const head = Buffer.from(
    fields.map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="data.csv"\r\nContent-Type: text/csv\r\n\r\n${file.header}`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = [head, ...file.rows, tail];
  const total = body.reduce((sum, b) => sum + b.length, 0);

  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  // Nothing is read until everything is written.
  socket.pause();
  let closed = false;
  let ended = false;
  socket.once('close', () => (closed = true));
  socket.once('end', () => (ended = true));
  const deadline = Date.now() + timeoutMs;
  const giveUp = setTimeout(() => socket.destroy(), timeoutMs);
  const started = performance.now();
  try {
    socket.write(`POST ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${total}\r\n\r\n`);
    let written = 0;
    const drained = () =>
      new Promise<void>((resolve) => {
        const done = () => {
          socket.off('drain', done).off('close', done);
          resolve();
        };
        socket.once('drain', done).once('close', done);
      });
    writing: for (const part of body) {
      for (let at = 0; at < part.length; at += 64 * 1024) {
        if (socket.destroyed) break writing;
        const chunk = part.subarray(at, at + 64 * 1024);
        if (!socket.write(chunk)) await drained();
        if (!socket.destroyed) written += chunk.length;
      }
    }
    // Now it reads.
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.resume();
    const parse = () => {
      const text = received.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const rest = text.slice(end + 4);
      if (Buffer.byteLength(rest) < Number(headers['content-length'] ?? Infinity)) return undefined;
      return { status: Number(statusLine!.split(' ')[1]), headers, envelope: JSON.parse(rest) as Sent['envelope'] };
    };
    let reply = parse();
    while (!reply && !closed && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      reply = parse();
    }
    const ms = performance.now() - started;
    if (!reply) throw new Error(`no reply after ${Math.round(ms)} ms (${written} of ${total} bytes written, ${closed ? 'closed' : 'open'})`);
    // The server closes once it has read the rest.
    while (!ended && !closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    return { ms, written, total, ...reply, closed: ended || closed };
  } finally {
    clearTimeout(giveUp);
    socket.destroy();
  }
}

const newJob = async (ctx: TestContext, user: TestUser) => (await factories(ctx.database.db).job(user)).jobId;
const spoolFiles = (ctx: TestContext) => (existsSync(ctx.config.uploads.spoolDir) ? readdirSync(ctx.config.uploads.spoolDir) : []);
const stagingTables = async (ctx: TestContext) =>
  (await sql<{ n: number }>`select count(*)::int as n from pg_tables where tablename like 'data\\_staging\\_%'`.execute(ctx.database.db)).rows[0]!.n;

describe('a refusal before the body is read', () => {
  let ctx: TestContext;
  let port: number;
  let alice: TestUser;
  let bob: TestUser;
  beforeAll(async () => {
    // A 5 MB per-user spool quota, so the 20 MB file also meets the quota refusal.
    ctx = await createTestContext({ env: { UPLOAD_SPOOL_USER_MB: '5' } });
    alice = await ctx.createUser();
    bob = await ctx.createUser();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as net.AddressInfo).port;
  });
  afterEach(async () => {
    // Nothing of a refused upload stays: no spool file, no spool space held, no staging table.
    expect(spoolFiles(ctx)).toEqual([]);
    expect(ctx.services.data.spool.usage().total).toBe(0);
    expect(await stagingTables(ctx)).toBe(0);
  });
  afterAll(async () => ctx?.close());

  /** Sends the whole 20 MB body; the refusal must come within 2 s, with Connection: close, and the server must then close. */
  async function refusedAtOnce(url: string, fields: [string, string | number][], file: { field?: string; header?: string; rows?: Buffer[] } = {}) {
    const sent = await sendWholeThenRead(port, url, fields, { field: file.field ?? 'Servicefile', header: file.header ?? HEADER, rows: file.rows ?? [ROWS] });
    expect(sent.written).toBe(sent.total);
    expect(sent.total).toBeGreaterThan(BODY_MB * 1024 * 1024);
    expect(sent.ms).toBeLessThan(2000);
    expect(sent.status).toBe(200);
    expect(sent.headers.connection).toBe('close');
    expect(sent.closed).toBe(true);
    expect(sent.envelope.status).toBe(1);
    return sent.envelope.data as string;
  }

  it('a bad record at line 1,050', async () => {
    const jobId = await newJob(ctx, alice);
    const rows = withBadRecord(1050);
    expect(await refusedAtOnce(`${CURRENT}/data.php?tz=${TZ}`, [['session', alice.session], ['job_id', jobId]], { rows })).toBe(
      "Invalid upload: line 1050 of 'data.csv' has 3 fields but the header has 5",
    );
    // The older version's route is the same receiver.
    expect(await refusedAtOnce(`${OLDER}/data.php?tz=${TZ}`, [['session', alice.session], ['job_id', jobId]], { field: 'servicefile', rows })).toBe(
      "Invalid upload: line 1050 of 'data.csv' has 3 fields but the header has 5",
    );
  });

  it('too many columns', async () => {
    const jobId = await newJob(ctx, alice);
    const header = `${Array.from({ length: 1001 }, (_, i) => `c${i}`).join(',')}\n`;
    expect(await refusedAtOnce(`${CURRENT}/data.php?tz=${TZ}`, [['session', alice.session], ['job_id', jobId]], { header })).toBe(
      "Invalid upload: 'data.csv' line 1: the header has 1001 columns; at most 1000 are allowed",
    );
  });

  it('no session: a wrong one, and none before the file', async () => {
    expect(await refusedAtOnce(`${CURRENT}/data.php?tz=${TZ}`, [['session', 'not-a-session'], ['job_id', 1]])).toBe('Invalid or expired session');
    expect(await refusedAtOnce(`${CURRENT}/data.php?tz=${TZ}`, [])).toMatch(/^Invalid upload: a file sent before the session may hold at most 1 MB; /);
  });

  it("someone else's job", async () => {
    const jobId = await newJob(ctx, alice);
    expect(await refusedAtOnce(`${CURRENT}/data.php?tz=${TZ}`, [['session', bob.session], ['job_id', jobId]])).toBe(`Job ${jobId} not found`);
  });

  it("over the user's spool quota", async () => {
    const jobId = await newJob(ctx, alice);
    expect(await refusedAtOnce(`${CURRENT}/data.php?tz=${TZ}`, [['session', alice.session], ['job_id', jobId]])).toBe(
      'Invalid upload: your uploads in progress would hold more than 5 MB at once; wait until they finish, then send this one again',
    );
  });

  it('a file in a field that is not the upload', async () => {
    const jobId = await newJob(ctx, alice);
    expect(await refusedAtOnce(`${CURRENT}/data.php?tz=${TZ}`, [['session', alice.session], ['job_id', jobId]], { field: 'other' })).toBe(
      "Invalid parameter 'other': is not a file field of this upload; send the CSV as 'Servicefile'",
    );
  });

  it('a stored upload keeps its connection open (nothing to linger over)', async () => {
    const jobId = await newJob(ctx, alice);
    const rows = [ROWS.subarray(0, ROWS.indexOf(10, 256 * 1024) + 1)];
    const boundary = `----ok${randomBytes(6).toString('hex')}`;
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="session"\r\n\r\n${alice.session}\r\n--${boundary}\r\nContent-Disposition: form-data; name="job_id"\r\n\r\n${jobId}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="Servicefile"; filename="data.csv"\r\nContent-Type: text/csv\r\n\r\n${HEADER}`,
      ),
      ...rows,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const res = await fetch(`http://127.0.0.1:${port}${CURRENT}/data.php?tz=${TZ}`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    expect(((await res.json()) as { status: number }).status).toBe(0);
    expect(res.headers.get('connection')).not.toBe('close');
  });
});

describe('the lingering close is bounded', () => {
  const LINGERING_TIME_MS = 800;
  let ctx: TestContext;
  let port: number;
  let alice: TestUser;
  beforeAll(async () => {
    ctx = await createTestContext({ env: { LINGERING_TIME_MS: String(LINGERING_TIME_MS), LINGERING_MAX_MB: '4' } });
    alice = await ctx.createUser();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => ctx?.close());

  it('in bytes: past LINGERING_MAX_MB after the refusal the connection is cut', async () => {
    const jobId = await newJob(ctx, alice);
    // The bad record near the start: about 20 MB follow it, five times the bound. The sender is cut, not the reply awaited.
    const failed = await sendWholeThenRead(port, `${CURRENT}/data.php?tz=${TZ}`, [['session', alice.session], ['job_id', jobId]], { field: 'Servicefile', header: HEADER, rows: withBadRecord(20) }, 5000).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failed).toMatch(/^no reply after \d+ ms \(\d+ of \d+ bytes written, closed\)$/);
    const written = Number(/\((\d+) of/.exec(failed!)![1]);
    // What was taken: the start before the refusal, the bound, and what the socket buffers held.
    expect(written).toBeLessThan(12 * 1024 * 1024);
    expect(spoolFiles(ctx)).toEqual([]);
  });

  it('in time: a sender that keeps trickling after the refusal is closed after LINGERING_TIME_MS', async () => {
    const jobId = await newJob(ctx, alice);
    const boundary = `----trickle${randomBytes(6).toString('hex')}`;
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="session"\r\n\r\n${alice.session}\r\n--${boundary}\r\nContent-Disposition: form-data; name="job_id"\r\n\r\n${jobId}\r\n--${boundary}\r\nContent-Disposition: form-data; name="Servicefile"; filename="data.csv"\r\nContent-Type: text/csv\r\n\r\n${HEADER}2000,1,1\n`;
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.on('error', () => undefined);
    let received = '';
    let closedAt: number | undefined;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.once('close', () => (closedAt = performance.now()));
    socket.write(`POST ${CURRENT}/data.php?tz=${TZ} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + 1024 * 1024}\r\n\r\n${head}`);
    try {
      const deadline = performance.now() + 5000;
      while (!received.includes('"status":1') && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      const refusedAt = performance.now();
      expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*connection: close\r\n[\s\S]*line 2 of 'data\.csv' has 3 fields but the header has 5/i);
      // 1 KB every 50 ms, well within the byte bound: only the time bound ends it.
      while (closedAt === undefined && performance.now() < deadline) {
        socket.write('2000,1,1,1,1\n'.repeat(80));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(closedAt).toBeDefined();
      expect(closedAt! - refusedAt).toBeGreaterThan(LINGERING_TIME_MS - 200);
      expect(closedAt! - refusedAt).toBeLessThan(LINGERING_TIME_MS + 1500);
    } finally {
      socket.destroy();
    }
  });
});
