import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CURRENT,
  TZ,
  createDatabase,
  jobRecord,
  killAll,
  multipartBody,
  newConsumer,
  newJob,
  seriesCsv,
  startApi,
  upload,
  type Client,
  type Envelope,
  type FaultDatabase,
  type ServiceProcess,
} from './support.js';

/**
 * Upload quotas: MAX_UPLOAD_MB bounds one upload; every file is received into the spool (DATA_DIR/spool)
 * first, whose disk must have room for what the upload may grow to.
 */
let db: FaultDatabase;
let small: ServiceProcess; // MAX_UPLOAD_MB=1
let huge: ServiceProcess; // MAX_UPLOAD_MB and the spool quotas larger than any disk here
const dataDirs: string[] = [];

function dataDir() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mtcs-fault-data-'));
  dataDirs.push(dir);
  return dir;
}
const spooled = (dir: string) => (existsSync(path.join(dir, 'spool')) ? readdirSync(path.join(dir, 'spool')) : []);

/** A CSV of about `mb` megabytes. */
function csvOfSize(mb: number): string {
  const lines = ['year,month,x1,x2,demand'];
  for (let i = 0, size = 0; size < mb * 1024 * 1024; i++) {
    const line = `${2000 + Math.floor(i / 12)},${(i % 12) + 1},${i % 20},${i % 10},${i % 97}`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

/** POST /data with the file part FIRST, so the service must spool it before it knows the caller. */
async function uploadFileFirst(client: Client, jobId: number, csv: string): Promise<Envelope> {
  const { body, contentType, boundary } = multipartBody({}, csv);
  // multipartBody puts fields first; with none, append them after the file instead.
  const tail = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="session"\r\n\r\n${client.session}\r\n--${boundary}\r\nContent-Disposition: form-data; name="job_id"\r\n\r\n${jobId}\r\n--${boundary}--\r\n`,
  );
  const withFields = Buffer.concat([body.subarray(0, body.length - `--${boundary}--\r\n`.length), tail]);
  const res = await fetch(`${client.baseUrl}${CURRENT}/data.php?tz=${TZ}`, { method: 'POST', body: withFields, headers: { 'content-type': contentType }, signal: AbortSignal.timeout(60_000) });
  // 413 when the announced Content-Length is over the limit (refused before the body is read).
  expect([200, 413]).toContain(res.status);
  return (await res.json()) as Envelope;
}

// Refused while reading (the file exceeds the limit), or at once from its announced Content-Length.
const OVER_LIMIT = /^Invalid upload: .*(exceeds? the maximum (upload )?size|announces [\d.]+ MB, over the maximum upload size) of 1 MB/;
const smallData = dataDir();
const hugeData = dataDir();
const HUGE_MB = String(1024 * 1024 * 1024);

beforeAll(async () => {
  db = await createDatabase();
  // One starts first so the two do not race each other through the migrations' lock for long.
  // The lingering close reads up to LINGERING_MAX_MB of a refused body so the client hears the refusal;
  // past it the socket closes at once and a client still writing sees EPIPE. 4 MB covers the 2.5 MB files.
  small = await startApi({ databaseUrl: db.url, env: { MAX_UPLOAD_MB: '1', LINGERING_MAX_MB: '4', DATA_DIR: smallData } });
  huge = await startApi({ databaseUrl: db.url, env: { MAX_UPLOAD_MB: HUGE_MB, UPLOAD_SPOOL_USER_MB: HUGE_MB, UPLOAD_SPOOL_TOTAL_MB: HUGE_MB, DATA_DIR: hugeData } });
});

afterAll(async () => {
  await killAll();
  await db?.drop();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

async function inputCount(client: Client, jobId: number) {
  return (await client.ok('GET', 'data', { job_id: jobId, output: 0, progress: 1 }))[0].count as string;
}

describe('an upload over MAX_UPLOAD_MB', () => {
  it('is refused with a clear error; nothing of it is stored and the previous data stays', async () => {
    const user = await newConsumer(small.baseUrl);
    const jobId = await newJob(user);
    const big = csvOfSize(2.5);

    // A job without data keeps none.
    const refused = await upload(user, jobId, big);
    expect([200, 413]).toContain(refused.http);
    expect(refused.envelope.status).toBe(1);
    expect(refused.envelope.data).toMatch(OVER_LIMIT);
    expect(await inputCount(user, jobId)).toBe('0');
    expect((await jobRecord(user, jobId)).Status).toBe('0');

    // A job with data keeps exactly that data.
    expect((await upload(user, jobId, seriesCsv(30))).envelope.status).toBe(0);
    const again = await upload(user, jobId, big);
    expect(again.envelope.data).toMatch(OVER_LIMIT);
    expect(await inputCount(user, jobId)).toBe('30');
    const first = await user.ok('GET', 'data', { job_id: jobId, output: 0, limit: 1 });
    expect(first).toEqual([{ year: '2000', month: '1', x1: expect.any(String), x2: expect.any(String), demand: expect.any(String) }]);
    const datasets = await db.query<{ n: number }>('select count(*)::int as n from datasets where job_id = $1', [jobId]);
    expect(datasets[0]!.n).toBe(1);

    // The same when the file is spooled before the caller is known; the spool file is gone after.
    const spooledRefusal = await uploadFileFirst(user, jobId, big);
    expect(spooledRefusal.data).toMatch(OVER_LIMIT);
    expect(await inputCount(user, jobId)).toBe('30');
    expect(spooled(smallData)).toEqual([]);
  });
});

describe('too little free disk to spool an upload', () => {
  it('refuses the file up front with a clear error; a file before the session needs only the anonymous allowance', async () => {
    const user = await newConsumer(huge.baseUrl);
    const jobId = await newJob(user);
    const refused = await upload(user, jobId, seriesCsv(30));
    expect(refused.envelope).toEqual({
      status: 1,
      data: `Service unavailable: not enough free disk space to receive an upload of up to ${HUGE_MB} MB; try again later`,
    });
    expect(spooled(hugeData)).toEqual([]);
    expect(await inputCount(user, jobId)).toBe('0');

    // A file sent before the session may spool only UPLOAD_ANONYMOUS_KB (1 MB), which the disk has.
    const envelope = await uploadFileFirst(user, jobId, seriesCsv(30));
    expect(envelope).toEqual({ status: 0, data: `Data stored for job ${jobId}: 30 rows, 5 columns from 1 file` });
    expect(spooled(hugeData)).toEqual([]);
  });

  it('spools and stores when there is room, and removes the spool file afterwards', async () => {
    const user = await newConsumer(small.baseUrl);
    const jobId = await newJob(user);
    const envelope = await uploadFileFirst(user, jobId, seriesCsv(30, 0, Number.parseInt(randomBytes(2).toString('hex'), 16)));
    expect(envelope).toEqual({ status: 0, data: `Data stored for job ${jobId}: 30 rows, 5 columns from 1 file` });
    expect(spooled(smallData)).toEqual([]);
    expect((await upload(user, jobId, seriesCsv(40))).envelope).toEqual({ status: 0, data: `Data stored for job ${jobId}: 40 rows, 5 columns from 1 file` });
    expect(spooled(smallData)).toEqual([]);
  });
});
