import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
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
 * Upload quotas: MAX_UPLOAD_MB bounds one upload; a file that arrives before `session`/`job_id` is
 * spooled to the temporary directory, which must have room for an upload of that size.
 */
let db: FaultDatabase;
let small: ServiceProcess; // MAX_UPLOAD_MB=1
let huge: ServiceProcess; // MAX_UPLOAD_MB larger than any disk here
const spoolDirs: string[] = [];

function spoolDir() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mtcs-fault-spool-'));
  spoolDirs.push(dir);
  return dir;
}
const spooled = (dir: string) => readdirSync(dir).filter((f) => f.startsWith('mtcs-upload-'));

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
  expect(res.status).toBe(200);
  return (await res.json()) as Envelope;
}

const smallSpool = spoolDir();
const hugeSpool = spoolDir();

beforeAll(async () => {
  db = await createDatabase();
  // One starts first so the two do not race each other through the migrations' lock for long.
  small = await startApi({ databaseUrl: db.url, env: { MAX_UPLOAD_MB: '1', TMPDIR: smallSpool } });
  huge = await startApi({ databaseUrl: db.url, env: { MAX_UPLOAD_MB: String(1024 * 1024 * 1024), TMPDIR: hugeSpool } });
});

afterAll(async () => {
  await killAll();
  await db?.drop();
  for (const dir of spoolDirs) rmSync(dir, { recursive: true, force: true });
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
    expect(refused.http).toBe(200);
    expect(refused.envelope.status).toBe(1);
    expect(refused.envelope.data).toMatch(/^Invalid upload: .*exceeds? the maximum (upload )?size of 1 MB/);
    expect(await inputCount(user, jobId)).toBe('0');
    expect((await jobRecord(user, jobId)).Status).toBe('0');

    // A job with data keeps exactly that data.
    expect((await upload(user, jobId, seriesCsv(30))).envelope.status).toBe(0);
    const again = await upload(user, jobId, big);
    expect(again.envelope.data).toMatch(/^Invalid upload: .*maximum (upload )?size of 1 MB/);
    expect(await inputCount(user, jobId)).toBe('30');
    const first = await user.ok('GET', 'data', { job_id: jobId, output: 0, limit: 1 });
    expect(first).toEqual([{ year: '2000', month: '1', x1: expect.any(String), x2: expect.any(String), demand: expect.any(String) }]);
    const datasets = await db.query<{ n: number }>('select count(*)::int as n from datasets where job_id = $1', [jobId]);
    expect(datasets[0]!.n).toBe(1);

    // The same when the file is spooled before the caller is known; the spool file is gone after.
    const spooledRefusal = await uploadFileFirst(user, jobId, big);
    expect(spooledRefusal.data).toMatch(/^Invalid upload: .*maximum (upload )?size of 1 MB/);
    expect(await inputCount(user, jobId)).toBe('30');
    expect(spooled(smallSpool)).toEqual([]);
  });
});

describe('too little free disk to spool an upload', () => {
  it('refuses a file that would need spooling, up front, with a clear error', async () => {
    const user = await newConsumer(huge.baseUrl);
    const jobId = await newJob(user);
    const envelope = await uploadFileFirst(user, jobId, seriesCsv(30));
    expect(envelope).toEqual({
      status: 1,
      data: `Service unavailable: not enough free disk space to receive an upload of up to ${1024 * 1024 * 1024} MB; try again later, or send session and job_id before Servicefile so the file streams straight to the database`,
    });
    expect(spooled(hugeSpool)).toEqual([]);
    expect(await inputCount(user, jobId)).toBe('0');

    // As the message says: with session and job_id first, the file streams to the database unspooled.
    const streamed = await upload(user, jobId, seriesCsv(30));
    expect(streamed.envelope).toEqual({ status: 0, data: `Data stored for job ${jobId}: 30 rows, 5 columns from 1 file` });
    expect(spooled(hugeSpool)).toEqual([]);
  });

  it('spools and stores when there is room, and removes the spool file afterwards', async () => {
    const user = await newConsumer(small.baseUrl);
    const jobId = await newJob(user);
    const envelope = await uploadFileFirst(user, jobId, seriesCsv(30, 0, Number.parseInt(randomBytes(2).toString('hex'), 16)));
    expect(envelope).toEqual({ status: 0, data: `Data stored for job ${jobId}: 30 rows, 5 columns from 1 file` });
    expect(spooled(smallSpool)).toEqual([]);
  });
});
