import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { openPGlite } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';
import { createTrainingRunner } from '../../src/jobs-runner/wiring.js';
import { CURRENT, createTestContext, form, multipart, type TestContext } from '../support/helper.js';
import { createDatabase, killAll, newConsumer, newJob, startApi, upload, waitFor, type FaultDatabase } from './support.js';

/**
 * Training memory: a job's memory is bounded whatever the upload's size, and a job that would
 * not fit fails with the reason while the process keeps serving.
 */

const MB = 1024 * 1024;

/** Peak and current resident size of a process, in MB (/proc/<pid>/status). */
function residentMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** A numeric table (no date column) of about `bytes`: y = 3*x1 + 2*x2 + x3/100 + noise; the last 5 rows to forecast. */
function numericCsv(bytes: number): Buffer {
  let s = 9;
  const rand = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const lines = ['x1,x2,x3,y'];
  let size = 0;
  while (size < bytes) {
    const x1 = rand() * 100;
    const x2 = rand() * 10;
    const x3 = rand() * 1000;
    const line = `${x1.toFixed(3)},${x2.toFixed(4)},${x3.toFixed(2)},${(3 * x1 + 2 * x2 + x3 / 100 + rand()).toFixed(3)}`;
    lines.push(line);
    size += line.length + 1;
  }
  for (let i = 0; i < 5; i++) lines.push(`${(i * 10).toFixed(3)},1.0000,100.00,`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

afterAll(async () => {
  await killAll();
});

describe('a large upload trains in bounded memory', () => {
  let db: FaultDatabase | undefined;
  afterAll(async () => db?.drop());

  it('a 40 MB numeric upload trains on a seeded sample of TRAINING_MAX_ROWS rows; the API process stays under 700 MB', async () => {
    db = await createDatabase();
    const api = await startApi({ databaseUrl: db.url, env: { WORKERS: '1', TRAINING_MAX_ROWS: '3000', TRAINING_MEMORY_MB: '256', JOB_RECOVER_EVERY_MS: '60000' } });
    const user = await newConsumer(api.baseUrl);
    const jobId = await newJob(user);
    const csv = numericCsv(40 * MB);
    const rows = csv.toString('latin1').split('\n').length - 2;
    const stored = await upload(user, jobId, csv);
    expect(stored.envelope.status, JSON.stringify(stored.envelope.data)).toBe(0);

    let peakDuring = 0;
    const status = await waitFor(
      `job ${jobId} to end`,
      async () => {
        peakDuring = Math.max(peakDuring, residentMb(api.pid).rss);
        const [job] = await db!.query<{ status: number; error: string | null }>('select status, error from jobs where id = $1', [jobId]);
        return job && job.status >= 3 ? job : undefined;
      },
      150_000,
      200,
    );
    expect(status).toEqual({ status: 3, error: null });
    const [record] = await db.query<{ text: string }>('select text from stat_records where job_id = $1', [jobId]);
    expect(record!.text).toContain(`training set: ${rows} rows uploaded, 3000 known rows (seeded sample, cap 3000) and 5 to forecast`);
    const output = await user.ok('GET', 'data', { job_id: jobId, output: 1, progress: 1 });
    expect(output).toEqual([{ count: '5' }]);
    // When the training set did not yet go through a spool file read by the thread, the whole set was read
    // into this process as strings and cloned into the thread:
    // 9 MB of CSV peaked at 2.2 GB.
    const { peak } = residentMb(api.pid);
    expect(peak, `peak RSS ${Math.round(peak)} MB, ${Math.round(peakDuring)} MB while training`).toBeLessThan(700);
    await api.stop();
  });
});

describe('a training thread that runs out of its heap', () => {
  let ctx: TestContext | undefined;
  let training: ReturnType<typeof createTrainingRunner> | undefined;
  afterAll(async () => {
    await training?.close();
    await ctx?.close();
  });

  it('fails its job with the reason; the process keeps serving', async () => {
    const database = await openPGlite();
    await migrate(database);
    ctx = await createTestContext({ database });
    // A heap far below the budget: what an engine underestimated by the budget check would meet.
    training = createTrainingRunner(ctx.services, { threads: 1, pollMs: 100, heartbeatMs: 200, heapMb: 48 });
    training.runner.start();
    const user = await ctx.createUser();
    const sub = await ctx.request({ method: 'POST', url: `/202111101200/subscriptions.php?session=${user.session}`, ...form({ app: 'forecast' }) });
    expect(sub.envelope.status).toBe(0);
    const lines = ['year,month,x1,x2,demand'];
    for (let i = 0; i < 20_000; i++) lines.push(`${2000 + Math.floor(i / 12)},${(i % 12) + 1},${i % 17},${i % 5},${i === 19_999 ? '' : 3 * (i % 17) + 2 * (i % 5) + (i % 12)}`);
    const job = await ctx.request({ method: 'POST', url: `${CURRENT}/jobs.php?session=${user.session}&tz=UTC&app_name=forecast&newTraining=1` });
    const jobId = Number((job.envelope.data as { job_id: number }).job_id);
    const stored = await ctx.request({
      method: 'POST',
      url: `${CURRENT}/data.php?tz=UTC`,
      ...multipart({ session: user.session, job_id: jobId, file: 1 }, [{ field: 'Servicefile', filename: 'big.csv', content: `${lines.join('\n')}\n` }]),
    });
    expect(stored.envelope.status).toBe(0);
    const failed = await waitFor(
      `job ${jobId} to fail`,
      async () => {
        const res = await ctx!.request({ method: 'GET', url: `${CURRENT}/jobs.php?session=${user.session}&tz=UTC&job_id=${jobId}` });
        const row = (res.envelope.data as { Status: string }[])[0];
        return row && ['3', '4'].includes(row.Status) ? row : undefined;
      },
      120_000,
      200,
    );
    expect(failed.Status).toBe('4');
    const [row] = await ctx.database.db.selectFrom('jobs').select(['status', 'error']).where('id', '=', jobId).execute();
    expect(row!.error).toBe('This training needs more than its memory budget of 48 MB (its thread ran out of heap); set DataRowsToConsider lower or upload fewer rows');
    // The process is alive and answers.
    const again = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs.php?session=${user.session}&tz=UTC&job_id=${jobId}` });
    expect(again.envelope.status).toBe(0);
  });
});
