import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTrainingSet } from '../../src/training/run/training-set.js';
import { createTrainingRunner } from '../../src/jobs-runner/wiring.js';
import { predict } from '../../src/training/index.js';
import { CURRENT, createTestContext, form, multipart, type TestContext, type TestUser } from '../support/helper.js';

let ctx: TestContext;
let training: ReturnType<typeof createTrainingRunner>;
let user: TestUser;
let admin: TestUser;
const TZ = 'Europe/Madrid';

/** A monthly series with a known relation: y = 3*x1 + 2*x2 + seasonal(month) + noise. */
function series(months: number, hidden: number, seed = 7) {
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const season = [5, 8, 14, 20, 26, 31, 33, 30, 24, 17, 10, 6];
  const rows: string[] = ['year,month,x1,x2,demand'];
  const truth: number[] = [];
  for (let i = 0; i < months + hidden; i++) {
    const year = 2000 + Math.floor(i / 12);
    const month = (i % 12) + 1;
    const x1 = Math.round(rand() * 20);
    const x2 = Math.round(rand() * 10);
    const y = 3 * x1 + 2 * x2 + season[month - 1]! + Math.round((rand() - 0.5) * 2);
    if (i >= months) truth.push(y);
    rows.push(`${year},${month},${x1},${x2},${i >= months ? '' : y}`);
  }
  return { csv: `${rows.join('\n')}\n`, truth };
}

async function createJobWithData(csv: string, params?: Record<string, number>) {
  const job = await ctx.request({ method: 'POST', url: `${CURRENT}/jobs.php?session=${user.session}&tz=${TZ}&app_name=forecast&newTraining=1` });
  expect(job.envelope.status).toBe(0);
  const { job_id: jobId, training_id: trainingId } = job.envelope.data as { job_id: number; training_id: number };
  if (params) {
    const fields = ['Job_Id', ...Object.keys(params)];
    const record = await ctx.request({
      method: 'POST',
      url: `${CURRENT}/app.php?tz=${TZ}`,
      ...form({ session: user.session, app_id: 'forecast', simple: 1, fields: fields.join(','), params: [jobId, ...Object.values(params)].join(',') }),
    });
    expect(record.envelope.status, String(record.envelope.data)).toBe(0);
  }
  const upload = await ctx.request({
    method: 'POST',
    url: `${CURRENT}/data.php?tz=${TZ}`,
    ...multipart({ session: user.session, job_id: jobId, file: 1 }, [{ field: 'Servicefile', filename: 'series.csv', content: csv }]),
  });
  expect(upload.envelope.status, String(upload.envelope.data)).toBe(0);
  return { jobId: Number(jobId), trainingId: Number(trainingId) };
}

async function job(jobId: number) {
  const res = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs.php?session=${user.session}&tz=${TZ}&job_id=${jobId}` });
  return res.envelope.data[0] as { Status: string; Nets: string };
}

async function waitForStatus(jobId: number, statuses: string[], timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const j = await job(jobId);
    if (statuses.includes(j.Status)) return j;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still in status ${j.Status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function advance(jobId: number): Promise<number> {
  const res = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs_progress.php?session=${user.session}&tz=${TZ}&job_id=${jobId}` });
  return Number(res.envelope.data.Advance);
}

beforeAll(async () => {
  ctx = await createTestContext();
  training = createTrainingRunner(ctx.services, { threads: 1, pollMs: 100, heartbeatMs: 200 });
  training.runner.start();
  admin = await ctx.createUser({ role: 'admin' });
  user = await ctx.createUser();
  const sub = await ctx.request({ method: 'POST', url: `/202111101200/subscriptions.php?session=${user.session}`, ...form({ app: 'forecast' }) });
  expect(sub.envelope.status).toBe(0);
});

afterAll(async () => {
  await training?.close();
  await ctx?.close();
});

describe('training end to end', () => {
  it('trains a queued job in a worker thread and forecasts the hidden rows better than seasonal-naive', async () => {
    const { csv, truth } = series(240, 12);
    const { jobId, trainingId } = await createJobWithData(csv);
    const done = await waitForStatus(jobId, ['3', '4']);
    expect(done.Status).toBe('3');
    expect(done.Nets).toMatch(/^\d+(-\d+)+$/);
    expect(await advance(jobId)).toBe(100);

    const out = await ctx.request({ method: 'GET', url: `${CURRENT}/data.php?session=${user.session}&tz=${TZ}&job_id=${jobId}&output=1&progress=0` });
    expect(out.envelope.status).toBe(0);
    const rows = out.envelope.data as Record<string, string>[];
    expect(rows).toHaveLength(12);
    const predicted = rows.map((r) => Number(r.demand));
    const mae = predicted.reduce((s, p, i) => s + Math.abs(p - truth[i]!), 0) / truth.length;
    // Seasonal-naive for the hidden year: the same month one year earlier, from the known rows.
    const known = csv.trim().split('\n').slice(1, 241).map((l) => Number(l.split(',')[4]));
    const naive = truth.map((_, i) => known[known.length - 12 + i]!);
    const naiveMae = naive.reduce((s, p, i) => s + Math.abs(p - truth[i]!), 0) / truth.length;
    expect(mae).toBeLessThan(naiveMae);

    // Every record the engine writes, read back through the endpoints.
    const trainingRow = await ctx.request({ method: 'GET', url: `${CURRENT}/trainings.php?session=${user.session}&tz=${TZ}&mode=1` });
    const t = (trainingRow.envelope.data as { id: number | string; status: number | string; neurons: number | string; inputs: number | string; layers_created: number | string }[]).find((r) => Number(r.id) === trainingId)!;
    expect(Number(t.status)).toBe(2);
    // The figures describe the selected model: a regression has no hidden layers (neurons 0).
    expect(Number(t.neurons)).toBeGreaterThanOrEqual(0);
    expect(Number(t.inputs)).toBeGreaterThan(0);
    expect(Number(t.layers_created)).toBe(Number(t.neurons) > 0 ? Number(t.layers_created) : 0);
    const stat = await ctx.request({ method: 'GET', url: `${CURRENT}/stat.php?session=${user.session}&tz=${TZ}&terminate=0&job_id=${jobId}&progress_type=2` });
    expect(stat.envelope.status).toBe(0);
    expect(stat.envelope.data.length).toBeGreaterThan(0);
    const netw = await ctx.request({ method: 'GET', url: `${CURRENT}/netw.php?session=${user.session}&tz=${TZ}&training_id=${trainingId}` });
    expect(netw.envelope.data).toMatch(new RegExp(`^Network for training ${trainingId} stored`));
    const consumption = await ctx.request({ method: 'GET', url: `${CURRENT}/consumptions.php?session=${user.session}` });
    const mine = (consumption.envelope.data as { training_id: number; ram: number; cpu: number; disk: number; date_invoiced: string | null }[]).filter((c) => Number(c.training_id) === trainingId);
    expect(mine).toHaveLength(1);
    expect(Number(mine[0]!.ram)).toBeGreaterThan(0);
    // ram is the training thread's own peak (its isolate's heap and buffers), not the process RSS that
    // the test runner, the API and the embedded database share.
    expect(Number(mine[0]!.ram)).toBeLessThan(process.memoryUsage().rss / 2 ** 20 / 2);
    expect(Number(mine[0]!.cpu)).toBeGreaterThan(0);
    expect(Number(mine[0]!.disk)).toBeGreaterThan(0);
    expect(mine[0]!.date_invoiced).toBeNull();
    const logs = await ctx.request({ method: 'GET', url: `${CURRENT}/logs.php?session=${admin.session}&tz=${TZ}&search=Job ${jobId} finished` });
    expect(logs.envelope.data.length).toBe(1);

    // A restart loses nothing: the model reloaded from the database predicts the same values.
    const model = await ctx.services.networks.loadModel(trainingId);
    const set = await ctx.services.data.readTrainingSet(jobId);
    const hiddenRows = set.rows.slice(240);
    const again = predict(model!, set.header, hiddenRows);
    expect(again.map((r) => r.demand)).toEqual(rows.map((r) => r.demand));

    // The training thread reads the set from a spool file the database streamed: cell for cell the stored rows.
    const dir = mkdtempSync(join(tmpdir(), 'spool-test-'));
    try {
      const spool = await ctx.services.data.spoolTrainingSet(jobId, join(dir, 'set.tsv'));
      expect(spool).toMatchObject({ header: set.header, columns: set.columns, rows: 252 });
      const read = await loadTrainingSet({ path: join(dir, 'set.tsv'), header: spool.header, columns: spool.columns }, {}, { maxRows: 50_000, budgetMb: 512 });
      expect(read.input.rows).toEqual(set.rows);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const text = (stat.envelope.data as Record<string, string>[]).map((r) => JSON.stringify(r)).join('');
    expect(text).toContain('training set: 252 rows uploaded, all rows and 12 to forecast');
  });

  it('honours DataRowsToConsider: the model sees the most recent N known rows, the rows to forecast all', async () => {
    const { csv } = series(240, 12, 5);
    const { jobId } = await createJobWithData(csv, { DataRowsToConsider: 60 });
    expect((await waitForStatus(jobId, ['3', '4'])).Status).toBe('3');
    const stat = await ctx.request({ method: 'GET', url: `${CURRENT}/stat.php?session=${user.session}&tz=${TZ}&terminate=0&job_id=${jobId}&progress_type=2` });
    const text = (stat.envelope.data as Record<string, string>[]).map((r) => JSON.stringify(r)).join('');
    expect(text).toContain('training set: 252 rows uploaded, 60 known rows (DataRowsToConsider, cap 60) and 12 to forecast');
    // The final fit saw those 60 rows, not the 240 uploaded.
    expect(Number(/trained (\d+) samples/.exec(text)?.[1])).toBeLessThanOrEqual(60);
    const out = await ctx.request({ method: 'GET', url: `${CURRENT}/data.php?session=${user.session}&tz=${TZ}&job_id=${jobId}&output=1&progress=1` });
    expect(out.envelope.data).toEqual([{ count: '12' }]);
  });

  it('aborts a running training within a second; Advance stops and the job is Aborted', async () => {
    const { csv } = series(60_000, 0, 11);
    const { jobId } = await createJobWithData(csv);
    await waitForStatus(jobId, ['2']);
    const deadline = Date.now() + 30_000;
    while ((await advance(jobId)) < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const abort = await ctx.request({ method: 'POST', url: `${CURRENT}/job_aborts.php?session=${user.session}`, ...form({ job_id: jobId }) });
    expect(abort.envelope).toEqual({ status: 0, data: 'success' });
    const abortedAt = Date.now();
    // The runner lets go of the job (its thread is terminated) within a second.
    while (Date.now() - abortedAt < 1000) {
      const stat = await ctx.request({ method: 'GET', url: `${CURRENT}/stat.php?session=${user.session}&tz=${TZ}&terminate=0&job_id=${jobId}&progress_type=2` });
      const record = (stat.envelope.data as { Status?: string; status?: string }[])[0];
      if (record && String(record.Status ?? record.status) === '3') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect((await job(jobId)).Status).toBe('5');
    const frozen = await advance(jobId);
    await new Promise((r) => setTimeout(r, 700));
    expect(await advance(jobId)).toBe(frozen);
    // The pool still trains afterwards.
    const { csv: small } = series(60, 3, 3);
    const next = await createJobWithData(small);
    expect((await waitForStatus(next.jobId, ['3', '4'])).Status).toBe('3');
  });
});
