import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { CURRENT, createTestContext, multipart, type TestContext, type TestUser } from '../support/helper.js';

/**
 * Uploads: a slow, stalled or hostile uploader holds nothing of the database and only bounded
 * disk; every file is refused at its first bad record with the line named; the spool is emptied on every path.
 */
const TZ = 'Europe/Madrid';
const HEADER = 'year,month,x1,x2,demand\n';

/** About `bytes` of CSV rows (no header). */
function rows(bytes: number, from = 0): string {
  const lines: string[] = [];
  for (let i = from, size = 0; size < bytes; i++) {
    const line = `${2000 + Math.floor(i / 12)},${(i % 12) + 1},${i % 20},${i % 10},${i % 97}`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

const newJob = async (ctx: TestContext, user: TestUser) => (await factories(ctx.database.db).job(user)).jobId;
const spoolFiles = (ctx: TestContext) => (existsSync(ctx.config.uploads.spoolDir) ? readdirSync(ctx.config.uploads.spoolDir) : []);

async function upload(ctx: TestContext, fields: Record<string, string | number>, content: string | Buffer, options: { query?: string; fileFirst?: boolean } = {}) {
  const body = multipart(options.fileFirst ? {} : fields, [{ field: 'Servicefile', filename: 'data.csv', content }]);
  if (options.fileFirst) {
    // The file part first, then the fields: the server meets the file before it knows the caller.
    const boundary = body.headers['content-type'].split('boundary=')[1]!;
    const end = Buffer.from(`--${boundary}--\r\n`);
    const tail = Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
    body.payload = Buffer.concat([body.payload.subarray(0, body.payload.length - end.length), Buffer.from(tail.join('')), end]);
  }
  return ctx.request({ method: 'POST', url: `${CURRENT}/data.php?tz=${TZ}${options.query ?? ''}`, ...body });
}

/**
 * A client on a real socket that sends the request head, the given fields and the start of a CSV file,
 * then nothing more (a stalled phone, or slowloris): the request stays open until `close()`.
 */
async function stalledUpload(port: number, fields: Record<string, string | number>, csvStart: string, query = '') {
  const boundary = `----stall${randomBytes(6).toString('hex')}`;
  const head = Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  const body = `${head.join('')}--${boundary}\r\nContent-Disposition: form-data; name="Servicefile"; filename="stalled.csv"\r\nContent-Type: text/csv\r\n\r\n${csvStart}`;
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let answer = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  socket.write(
    `POST ${CURRENT}/data.php?tz=${TZ}${query} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${Buffer.byteLength(body) + 1024 * 1024}\r\n\r\n`,
  );
  socket.write(body);
  return {
    /** Still waiting for the rest of its body: not answered, not closed. */
    open: () => !closed && answer === '',
    closed: () => closed,
    close: () => socket.destroy(),
  };
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** GET /sessions over real HTTP, as another user's browser would: answers within a generous bound or fails. */
async function sessionCheck(port: number, user: TestUser) {
  const res = await fetch(`http://127.0.0.1:${port}${CURRENT}/sessions.php?session=${user.session}`, { signal: AbortSignal.timeout(10_000) });
  return (await res.json()) as { status: number; data: unknown };
}

describe('a stalled upload', () => {
  let ctx: TestContext;
  let port: number;
  let alice: TestUser;
  let bob: TestUser;
  beforeAll(async () => {
    ctx = await createTestContext();
    alice = await ctx.createUser();
    bob = await ctx.createUser();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => ctx?.close());

  it("holds nothing of the database: another user's session check answers while it is open; its spool file goes when it is cut", async () => {
    const jobId = await newJob(ctx, alice);
    const stalled = await stalledUpload(port, { session: alice.session, job_id: jobId, file: 1 }, HEADER + rows(200_000));
    await waitFor('the stalled upload to reach the spool', () => ctx.services.data.spool.usage().total > 150_000);
    expect(spoolFiles(ctx)).toHaveLength(1);

    for (let i = 0; i < 3; i++) expect((await sessionCheck(port, bob)).status).toBe(0);
    // Bob's upload is stored meanwhile, and Alice's own job is not locked either.
    const bobJob = await newJob(ctx, bob);
    expect((await upload(ctx, { session: bob.session, job_id: bobJob }, HEADER + rows(5_000))).envelope.status).toBe(0);
    expect((await upload(ctx, { session: alice.session, job_id: jobId }, HEADER + rows(2_000))).envelope.status).toBe(0);
    expect(stalled.open()).toBe(true);

    stalled.close();
    await waitFor('the cut upload to release its spool', () => ctx.services.data.spool.usage().total === 0);
    expect(spoolFiles(ctx)).toEqual([]);
    // What the cut upload sent was never stored: the job keeps the complete upload.
    const count = await ctx.request({ method: 'GET', url: `${CURRENT}/data.php?session=${alice.session}&tz=${TZ}&job_id=${jobId}&progress=1` });
    expect(count.envelope.data).toEqual([{ count: String(rows(2_000).split('\n').length - 1) }]);
  });
});

describe('spool quotas', () => {
  let ctx: TestContext;
  let port: number;
  const stalls: { close(): void }[] = [];
  beforeAll(async () => {
    ctx = await createTestContext({
      env: { MAX_UPLOAD_MB: '2', UPLOAD_SPOOL_USER_MB: '0.5', UPLOAD_SPOOL_TOTAL_MB: '0.75', UPLOAD_ANONYMOUS_KB: '16', UPLOAD_ANONYMOUS_TOTAL_MB: String(24 / 1024) },
    });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as net.AddressInfo).port;
  });
  afterEach(async () => {
    for (const stall of stalls.splice(0)) stall.close();
    await waitFor('the spool to empty', () => ctx.services.data.spool.usage().total === 0);
  });
  afterAll(async () => ctx?.close());

  it('refuses a user over their own quota and everyone over the global one, naming the limit; both pass once the spool empties', async () => {
    const alice = await ctx.createUser();
    const bob = await ctx.createUser();
    const aliceJob = await newJob(ctx, alice);
    const bobJob = await newJob(ctx, bob);
    stalls.push(await stalledUpload(port, { session: alice.session, job_id: aliceJob }, HEADER + rows(310_000)));
    await waitFor('the stalled upload to hold 300 KB', () => ctx.services.data.spool.usage().total > 300_000);

    const mine = await upload(ctx, { session: alice.session, job_id: aliceJob }, HEADER + rows(300_000));
    expect(mine.envelope).toEqual({
      status: 1,
      data: 'Invalid upload: your uploads in progress would hold more than 512 KB at once; wait until they finish, then send this one again',
    });
    const all = await upload(ctx, { session: bob.session, job_id: bobJob }, HEADER + rows(500_000));
    expect(all.envelope).toEqual({ status: 1, data: 'Service unavailable: the uploads in progress fill the upload spool (768 KB in all); try again in a few minutes' });
    expect(spoolFiles(ctx)).toHaveLength(1);

    stalls.splice(0).forEach((s) => s.close());
    await waitFor('the spool to empty', () => ctx.services.data.spool.usage().total === 0);
    expect((await upload(ctx, { session: bob.session, job_id: bobJob }, HEADER + rows(500_000))).envelope.status).toBe(0);
    expect((await upload(ctx, { session: alice.session, job_id: aliceJob }, HEADER + rows(300_000))).envelope.status).toBe(0);
    expect(spoolFiles(ctx)).toEqual([]);
  });

  it('gives a file sent before any session only the anonymous allowance, per request and in all', async () => {
    const alice = await ctx.createUser();
    const jobId = await newJob(ctx, alice);
    const hint = 'send the session and job_id fields before Servicefile (or the session in the query, a cookie or Authorization: Bearer)';

    // Small enough: spooled, then stored once the session field arrives.
    const small = await upload(ctx, { session: alice.session, job_id: jobId }, HEADER + rows(8_000), { fileFirst: true });
    expect(small.envelope.status).toBe(0);
    // Over the allowance: refused, before the session that follows is even read.
    const big = await upload(ctx, { session: alice.session, job_id: jobId }, HEADER + rows(40_000), { fileFirst: true });
    expect(big.envelope).toEqual({ status: 1, data: `Invalid upload: a file sent before the session may hold at most 16 KB; ${hint}` });
    // The same file with the session in the query is the user's, not anonymous.
    const known = await upload(ctx, { job_id: jobId }, HEADER + rows(40_000), { fileFirst: true, query: `&session=${alice.session}` });
    expect(known.envelope.status).toBe(0);

    // Anonymous files together: one stalled anonymous upload holds 12 KB of the 24 KB.
    stalls.push(await stalledUpload(port, {}, HEADER + rows(12_500)));
    await waitFor('the anonymous upload to hold 12 KB', () => ctx.services.data.spool.usage().anonymous > 12_000);
    const crowded = await upload(ctx, { session: alice.session, job_id: jobId }, HEADER + rows(14_000), { fileFirst: true });
    expect(crowded.envelope).toEqual({ status: 1, data: `Service unavailable: files sent before their session fill the 24 KB kept for them; ${hint}` });
    expect(spoolFiles(ctx)).toHaveLength(1);
  });

  it('authenticates as soon as a session is presented: a wrong session is refused before the file is read', async () => {
    const res = await upload(ctx, { session: 'not-a-session', job_id: 1 }, HEADER + rows(300_000));
    expect(res.envelope).toEqual({ status: 1, data: 'Invalid or expired session' });
    expect(ctx.services.data.spool.usage().total).toBe(0);
  });
});

describe('record bounds', () => {
  let ctx: TestContext;
  let alice: TestUser;
  beforeAll(async () => {
    ctx = await createTestContext({ env: { MAX_UPLOAD_MB: '8' } });
    alice = await ctx.createUser();
  });
  afterAll(async () => ctx?.close());

  const refused = async (content: string) => {
    const jobId = await newJob(ctx, alice);
    const res = await upload(ctx, { session: alice.session, job_id: jobId }, content);
    expect(spoolFiles(ctx)).toEqual([]);
    return res.envelope;
  };

  it('refuses one quoted cell spanning thousands of lines at the record bound, naming the line', async () => {
    // The issue's case, scaled: a 3 MB cell over 3,000 lines (20 MB over 20,000 was accepted before).
    const cell = `"${`${'y'.repeat(999)}\n`.repeat(3000)}"`;
    const envelope = await refused(`${HEADER}2000,1,1,1,1\n2000,2,${cell},1,1\n`);
    expect(envelope.status).toBe(1);
    expect(envelope.data).toMatch(/^Invalid upload: 'data\.csv' line (\d+): a record is longer than 1 MB$/);
    const line = Number(/line (\d+)/.exec(envelope.data)![1]);
    expect(line).toBeGreaterThan(1000);
    expect(line).toBeLessThan(1100);
  });

  it('refuses a cell over 64 KB on both paths, naming the line', async () => {
    const long = 'z'.repeat(70 * 1024);
    expect(await refused(`${HEADER}2000,1,1,1,1\n2000,2,1,1,1\n2000,3,${long},1,1\n`)).toEqual({
      status: 1,
      data: "Invalid upload: 'data.csv' line 4: a cell is longer than 64 KB",
    });
    expect(await refused(`${HEADER}2000,1,"a",1,1\n2000,2,"${long}",1,1\n`)).toEqual({
      status: 1,
      data: "Invalid upload: 'data.csv' line 3: a cell is longer than 64 KB",
    });
    // Just under the bound is stored.
    const jobId = await newJob(ctx, alice);
    expect((await upload(ctx, { session: alice.session, job_id: jobId }, `${HEADER}2000,1,${'z'.repeat(60 * 1024)},1,1\n`)).envelope.status).toBe(0);
  });

  it('refuses a line over the record bound and a header over the column bound', async () => {
    const wide = Array.from({ length: 40_000 }, () => 'abcdefghijklmnopqrstuvwxyz').join(';');
    const envelope = await refused(`${HEADER}2000,1,1,1,1\n${wide}\n`);
    expect(envelope.data).toMatch(/^Invalid upload: 'data\.csv' line 3: a (record|line) is longer than 1 MB/);
    const header = Array.from({ length: 1001 }, (_, i) => `c${i}`).join(',');
    expect(await refused(`${header}\n${'1,'.repeat(1000)}1\n`)).toEqual({
      status: 1,
      data: "Invalid upload: 'data.csv' line 1: the header has 1001 columns; at most 1000 are allowed",
    });
  });
});

describe('the spool on every path', () => {
  it('is empty after a success, an error and a body timeout, and a restart removes what a dead process left', async () => {
    const dataDir = path.join(os.tmpdir(), `mtcs-spool-${process.pid}-${randomBytes(4).toString('hex')}`);
    const ctx = await createTestContext({ env: { DATA_DIR: dataDir, BODY_TIMEOUT_MS: '500' } });
    try {
      const alice = await ctx.createUser();
      const jobId = await newJob(ctx, alice);
      expect((await upload(ctx, { session: alice.session, job_id: jobId }, HEADER + rows(20_000))).envelope.status).toBe(0);
      expect(spoolFiles(ctx)).toEqual([]);
      const bad = await upload(ctx, { session: alice.session, job_id: jobId }, `${HEADER}${rows(20_000)}2000,1,1\n`);
      expect(bad.envelope.data).toMatch(/^Invalid upload: line \d+ of 'data\.csv' has 3 fields but the header has 5$/);
      expect(spoolFiles(ctx)).toEqual([]);

      // A client that stops sending is cut after BODY_TIMEOUT_MS; its spool file goes with it.
      await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      const stalled = await stalledUpload((ctx.app.server.address() as net.AddressInfo).port, { session: alice.session, job_id: jobId }, HEADER + rows(50_000));
      await waitFor('the stalled upload to reach the spool', () => ctx.services.data.spool.usage().total > 0 || stalled.closed());
      expect(stalled.closed()).toBe(false);
      await waitFor('the server to cut the stalled upload', () => stalled.closed());
      await waitFor('its spool file to go', () => ctx.services.data.spool.usage().total === 0 && spoolFiles(ctx).length === 0);
      stalled.close();

      // What a killed process left: spool files of a dead pid and of this pid (a restarted container), a
      // staging table. A file of a live process stays.
      const host = os.hostname().replace(/[^A-Za-z0-9-]/g, '_');
      mkdirSync(ctx.config.uploads.spoolDir, { recursive: true });
      const dead = `${host}.${2 ** 22 + 17}.00aa.copy`;
      const mine = `${host}.${process.pid}.00bb.copy`;
      const live = `${host}.${process.ppid}.00cc.copy`;
      for (const name of [dead, mine, live]) writeFileSync(path.join(ctx.config.uploads.spoolDir, name), '1,2\n');
      await sql`create table data_staging_1_1 (ord integer generated always as identity, c1 text)`.execute(ctx.database.db);

      const restarted = await createTestContext({ env: { DATA_DIR: dataDir }, database: ctx.database });
      try {
        expect(spoolFiles(restarted)).toEqual([live]);
        const tables = await sql<{ n: number }>`select count(*)::int as n from pg_tables where tablename like 'data\\_staging\\_%'`.execute(ctx.database.db);
        // Postgres may be shared by other processes: only staging tables older than an hour go there.
        expect(tables.rows[0]!.n).toBe(0);
      } finally {
        await restarted.close();
      }
    } finally {
      await ctx.close();
    }
  });
});
