/**
 * A user's forecast jobs through the API, as the HTTP tests of the engine drive them: create, upload, wait
 * for the run to end, read the output and the run's explanation. One copy for every test file that trains.
 */
import { expect } from 'vitest';
import { createTrainingRunner } from '../../src/jobs-runner/wiring.js';
import { CURRENT, OLDER, createTestContext, form, multipart, type TestContext, type TestUser } from './helper.js';

export type Row = Record<string, string>;

export interface Stat {
  Status: string;
  Text: string;
  Explanation: string;
  Selection: null | {
    modelFamily: string;
    scheme: string;
    horizon: number;
    frequency: string;
    season: number;
    periods?: number[];
    outputs: { column: string; chosen: string; description: string; metric: string; error: number; baseline: { name: string; error: number }; candidates: { name: string; error: number | null }[]; notes?: string[] }[];
    panel?: {
      keys: string[];
      keySource: string;
      series: number;
      shortest: number;
      longest: number;
      wins: Record<string, number>;
      perSeries: { key: string[]; rows: number; outputs: { column: string; chosen: string }[]; note?: string }[];
    };
  };
}

export function forecastJobs(ctx: TestContext, user: TestUser, tz: string, timeoutMs: number) {
  async function newJob() {
    const job = await ctx.request({ method: 'POST', url: `${CURRENT}/jobs.php?session=${user.session}&tz=${tz}&app_name=forecast&newTraining=1` });
    expect(job.envelope.status).toBe(0);
    const { job_id: jobId, training_id: trainingId } = job.envelope.data as { job_id: number; training_id: number };
    return { jobId: Number(jobId), trainingId: Number(trainingId) };
  }

  async function upload(jobId: number, csv: string) {
    const res = await ctx.request({
      method: 'POST',
      url: `${CURRENT}/data.php?tz=${tz}`,
      ...multipart({ session: user.session, job_id: jobId, file: 1 }, [{ field: 'Servicefile', filename: 'series.csv', content: csv }]),
    });
    expect(res.envelope.status, String(res.envelope.data)).toBe(0);
  }

  async function jobWithData(csv: string, appRecord?: { fields: string; params: string }) {
    const job = await newJob();
    if (appRecord) {
      // The job's own App record, written before the upload queues the job.
      const res = await ctx.request({
        method: 'POST',
        url: `${CURRENT}/app.php?tz=${tz}`,
        ...form({ session: user.session, app_id: 'forecast', simple: 1, fields: `Job_Id,${appRecord.fields}`, params: `${job.jobId},${appRecord.params}` }),
      });
      expect(res.envelope.status, String(res.envelope.data)).toBe(0);
    }
    await upload(job.jobId, csv);
    return job;
  }

  async function jobStatus(jobId: number): Promise<string> {
    const res = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs.php?session=${user.session}&tz=${tz}&job_id=${jobId}` });
    return (res.envelope.data[0] as { Status: string }).Status;
  }

  async function waitForEnd(jobId: number, limitMs = timeoutMs - 10_000): Promise<string> {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const status = await jobStatus(jobId);
      if (['3', '4', '5'].includes(status)) return status;
      if (Date.now() > deadline) throw new Error(`job ${jobId} still in status ${status}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }

  async function stat(jobId: number): Promise<Stat> {
    const res = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs_progress.php?session=${user.session}&tz=${tz}&job_id=${jobId}&progress=2` });
    expect(res.envelope.status).toBe(0);
    return res.envelope.data.Stat as Stat;
  }

  async function statusRecords(jobId: number): Promise<{ status: string; text: string }[]> {
    const res = await ctx.request({ method: 'GET', url: `${CURRENT}/stat.php?session=${user.session}&tz=${tz}&terminate=0&job_id=${jobId}&progress_type=2` });
    return res.envelope.data as { status: string; text: string }[];
  }

  async function finished(jobId: number) {
    const status = await waitForEnd(jobId);
    if (status !== '3') throw new Error(`job ${jobId} ended in status ${status}: ${(await stat(jobId)).Text} / ${(await statusRecords(jobId))[0]?.text}`);
  }

  async function output(jobId: number, query = ''): Promise<Row[]> {
    const res = await ctx.request({ method: 'GET', url: `${CURRENT}/data.php?session=${user.session}&tz=${tz}&job_id=${jobId}&output=1${query}` });
    expect(res.envelope.status, String(res.envelope.data)).toBe(0);
    return res.envelope.data as Row[];
  }

  async function advance(jobId: number): Promise<number> {
    const res = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs_progress.php?session=${user.session}&tz=${tz}&job_id=${jobId}` });
    return Number(res.envelope.data.Advance);
  }

  return { newJob, upload, jobWithData, jobStatus, waitForEnd, stat, statusRecords, finished, output, advance };
}

/**
 * A test app with a training runner (one thread, quick polls) and a subscribed user, the setup every file
 * that trains through the API shares; close() stops the runner before the app.
 */
export async function trainingContext(tz: string, timeoutMs: number) {
  const ctx = await createTestContext();
  const training = createTrainingRunner(ctx.services, { threads: 1, pollMs: 100, heartbeatMs: 200 });
  training.runner.start();
  const user = await ctx.createUser();
  const sub = await ctx.request({ method: 'POST', url: `${OLDER}/subscriptions.php?session=${user.session}`, ...form({ app: 'forecast' }) });
  expect(sub.envelope.status).toBe(0);
  return {
    ctx,
    user,
    jobs: forecastJobs(ctx, user, tz, timeoutMs),
    close: async () => {
      await training.close();
      await ctx.close();
    },
  };
}
