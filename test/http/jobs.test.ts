import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobQueueRepository } from '../../src/domain/jobs/job-queue.repository.js';
import { createJobsRepository } from '../../src/domain/jobs/jobs.repository.js';
import { createJobsService } from '../../src/domain/jobs/jobs.service.js';
import { createTrainingsRepository } from '../../src/domain/trainings/trainings.repository.js';
import { CURRENT, OLDER, createTestContext, form, multipart, type TestContext, type TestUser } from '../support/helper.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const TZ = 'Europe/Madrid';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

async function subscribe(user: TestUser, app = 'forecast') {
  const res = await ctx.request({ method: 'POST', url: `${CURRENT}/subscriptions.php?session=${user.session}`, ...form({ app }) });
  expect(res.envelope.status).toBe(0);
}

/** A consumer subscribed to `forecast`. */
async function subscriber(name = 'Ana') {
  const user = await ctx.createUser({ name });
  await subscribe(user);
  return user;
}

async function createJob(user: TestUser, fields: Record<string, string | number> = { newTraining: 1 }) {
  return ctx.request({ method: 'POST', url: `${CURRENT}/jobs.php?session=${user.session}&tz=${TZ}&app_name=forecast`, ...multipart(fields) });
}

async function newJob(user: TestUser): Promise<{ job_id: number; training_id: number }> {
  const res = await createJob(user);
  expect(res.envelope.status).toBe(0);
  return res.envelope.data;
}

const listJobs = (user: TestUser, query = 'job_id=0', tz = TZ) =>
  ctx.request({ method: 'GET', url: `${CURRENT}/jobs.php?session=${user.session}&tz=${encodeURIComponent(tz)}&${query}` });

const abort = (user: TestUser, jobId: number) =>
  ctx.request({ method: 'POST', url: `${CURRENT}/job_aborts.php?session=${user.session}`, ...form({ job_id: jobId }) });

const progress = (user: TestUser, query: string) =>
  ctx.request({ method: 'GET', url: `${CURRENT}/jobs_progress.php?session=${user.session}&tz=${TZ}&${query}` });

const putJob = (user: TestUser, fields: Record<string, string | number>) =>
  ctx.request({ method: 'PUT', url: `${CURRENT}/jobs.php`, ...multipart({ session: user.session, tz: TZ, app_name: 'forecast', ...fields }) });

/** Tests put jobs in engine states directly, as the training engine would. */
async function setJob(id: number, patch: { status?: number; advance?: number; created_at?: Date; nets?: string; abort_requested?: boolean }) {
  await ctx.database.db.updateTable('jobs').set(patch).where('id', '=', id).execute();
}
async function jobRow(id: number) {
  return ctx.database.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

describe('POST /jobs (current version)', () => {
  it('creates a job with a new training and answers {job_id, training_id}', async () => {
    const ana = await subscriber();
    const res = await createJob(ana, { newTraining: 1, description: 'Sales 2024' });
    expect(res.envelope.status).toBe(0);
    const { job_id, training_id } = res.envelope.data;
    expect(Number.isInteger(job_id) && Number.isInteger(training_id)).toBe(true);
    const training = await ctx.database.db.selectFrom('trainings').selectAll().where('id', '=', training_id).executeTakeFirstOrThrow();
    expect(training).toMatchObject({ user_id: ana.id, app_name: 'forecast', description: 'Sales 2024', status: 0 });
    expect(await jobRow(job_id)).toMatchObject({ user_id: ana.id, training_id, app_name: 'forecast', status: 0 });
  });

  it('without newTraining continues the latest training of the app, or the training_id given', async () => {
    const ana = await subscriber();
    const first = await newJob(ana);
    const second = await newJob(ana);
    expect(second.training_id).not.toBe(first.training_id);
    const latest = await createJob(ana, {});
    expect(latest.envelope).toMatchObject({ status: 0, data: { training_id: second.training_id } });
    expect(latest.envelope.data.job_id).toBeGreaterThan(second.job_id);
    const chosen = await createJob(ana, { training_id: first.training_id });
    expect(chosen.envelope).toMatchObject({ status: 0, data: { training_id: first.training_id } });
  });

  it('refuses a job without newTraining when the caller has no training, and a training of someone else', async () => {
    const ana = await subscriber();
    const none = await createJob(ana, {});
    expect(none.envelope).toEqual({
      status: 1,
      data: "You have no training for application 'forecast' yet; send newTraining=1 to create one",
    });
    const bea = await subscriber('Bea');
    const beas = await newJob(bea);
    const foreign = await createJob(ana, { training_id: beas.training_id });
    expect(foreign.envelope).toEqual({ status: 1, data: `Training ${beas.training_id} not found` });
  });

  it('requires an active subscription from consumers, but not from administrators', async () => {
    const carl = await ctx.createUser({ name: 'Carl' });
    const refused = await createJob(carl);
    expect(refused.envelope).toEqual({ status: 1, data: "Forbidden: you have no active subscription to application 'forecast'" });
    await subscribe(carl);
    expect((await createJob(carl)).envelope.status).toBe(0);
    const unsubscribed = await ctx.request({ method: 'DELETE', url: `${CURRENT}/subscriptions.php?session=${carl.session}&app=forecast` });
    expect(unsubscribed.envelope.status).toBe(0);
    expect((await createJob(carl)).envelope).toEqual(refused.envelope);

    const unknownApp = await ctx.request({
      method: 'POST',
      url: `${CURRENT}/jobs.php?session=${carl.session}&tz=${TZ}&app_name=nope`,
      ...multipart({ newTraining: 1 }),
    });
    expect(unknownApp.envelope.status).toBe(1);
    expect(unknownApp.envelope.data).toContain("Invalid parameter 'app_name'");

    const admin = await ctx.createUser({ role: 'admin' });
    expect((await createJob(admin)).envelope.status).toBe(0);
  });

  it('names missing parameters', async () => {
    const ana = await subscriber();
    const noApp = await ctx.request({ method: 'POST', url: `${CURRENT}/jobs.php?session=${ana.session}&tz=${TZ}`, ...multipart({ newTraining: 1 }) });
    expect(noApp.envelope).toEqual({ status: 1, data: "Missing required parameter 'app_name'" });
    const noTz = await ctx.request({ method: 'POST', url: `${CURRENT}/jobs.php?session=${ana.session}&app_name=forecast`, ...multipart({}) });
    expect(noTz.envelope).toEqual({ status: 1, data: "Missing required parameter 'tz'" });
    const badTz = await createJob(ana, { tz: 'Mars/Olympus', newTraining: 1 });
    expect(badTz.envelope.status).toBe(1);
    expect(badTz.envelope.data).toContain("'tz'");
  });
});

describe('GET /jobs (current version)', () => {
  it('answers legacy Job records with string ids, the status as a string and DateTime in tz', async () => {
    const ana = await subscriber('Ana');
    const { job_id, training_id } = await newJob(ana);
    await setJob(job_id, { created_at: new Date('2024-07-01T10:00:00Z'), nets: '3-8-1' });
    const res = await listJobs(ana, `job_id=${job_id}`);
    const sessionId = (await jobRow(job_id))!.session_id;
    expect(res.envelope).toEqual({
      status: 0,
      data: [
        {
          Id: String(job_id),
          Session_Id: String(sessionId),
          Training_Id: String(training_id),
          app_name: 'forecast',
          Status: '0',
          DateTime: '2024-07-01 12:00:00',
          User_Name: 'Ana Tester',
          Nets: '3-8-1',
        },
      ],
    });
    expect(sessionId).toBeGreaterThan(0);
    const utc = await listJobs(ana, `job_id=${job_id}`, 'UTC');
    expect(utc.envelope.data[0].DateTime).toBe('2024-07-01 10:00:00');
  });

  it('job_id=0 lists every job of the caller, newest first; job_id is required', async () => {
    const ana = await subscriber();
    const a = await newJob(ana);
    const b = await newJob(ana);
    const all = await listJobs(ana);
    expect(all.envelope.data.map((j: any) => j.Id)).toEqual([String(b.job_id), String(a.job_id)]);
    for (const job of all.envelope.data) expect(job.DateTime).toMatch(TIMESTAMP);
    const missing = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs.php?session=${ana.session}&tz=${TZ}` });
    expect(missing.envelope).toEqual({ status: 1, data: "Missing required parameter 'job_id'" });
  });

  it('filters by status (0 = any), status_filter and their intersection', async () => {
    const ana = await subscriber();
    const ids: number[] = [];
    for (let status = 0; status <= 5; status++) {
      const { job_id } = await newJob(ana);
      await setJob(job_id, { status });
      ids.push(job_id);
    }
    const ofStatus = async (query: string) => (await listJobs(ana, `job_id=0&${query}`)).envelope.data.map((j: any) => Number(j.Id)).sort();
    expect(await ofStatus('status=0')).toEqual([...ids].sort());
    expect(await ofStatus('status=3')).toEqual([ids[3]]);
    expect(await ofStatus('status_filter=1,2')).toEqual([ids[1], ids[2]]);
    expect(await ofStatus('status_filter=0')).toEqual([ids[0]]);
    expect(await ofStatus('status_filter=1,2&status=2')).toEqual([ids[2]]);
    expect(await ofStatus('status_filter=1,2&status=4')).toEqual([]);
    const bad = await listJobs(ana, 'job_id=0&status_filter=1,9');
    expect(bad.envelope).toEqual({ status: 1, data: "Invalid parameter 'status_filter': must be job status codes (0 to 5) separated by commas" });
    expect((await listJobs(ana, 'job_id=0&status_filter=1,x')).envelope).toEqual(bad.envelope);
    const badStatus = await listJobs(ana, 'job_id=0&status=7');
    expect(badStatus.envelope).toEqual({ status: 1, data: "Invalid parameter 'status': 7 is not a job status (0 to 5)" });
  });

  it('filters by dates read in the request time zone (two zones, one instant)', async () => {
    const ana = await subscriber();
    const late = await newJob(ana);
    const other = await newJob(ana);
    // 23:30 UTC on 10 March 2024 is 00:30 on the 11th in Madrid and 19:30 on the 10th in New York (EDT).
    await setJob(late.job_id, { created_at: new Date('2024-03-10T23:30:00Z') });
    await setJob(other.job_id, { created_at: new Date('2024-03-13T12:00:00Z') });
    const ids = async (tz: string, query: string) => (await listJobs(ana, `job_id=0&${query}`, tz)).envelope.data.map((j: any) => Number(j.Id));

    expect(await ids('Europe/Madrid', 'date_from=2024-03-11&date_to=2024-03-11')).toEqual([late.job_id]);
    expect(await ids('America/New_York', 'date_from=2024-03-11&date_to=2024-03-11')).toEqual([]);
    expect(await ids('America/New_York', 'date_from=2024-03-10&date_to=2024-03-10')).toEqual([late.job_id]);
    expect(await ids('Europe/Madrid', 'date_to=2024-03-10')).toEqual([]);
    expect(await ids('America/New_York', 'date_from=2024-03-10 19:30:00&date_to=2024-03-10 19:30:00')).toEqual([late.job_id]);
    expect(await ids('America/New_York', 'date_from=2024-03-10 19:30:01')).toEqual([other.job_id]);
    expect(await ids('Europe/Madrid', 'date_from=2024-03-12')).toEqual([other.job_id]);

    const rendered = await listJobs(ana, `job_id=${late.job_id}`, 'America/New_York');
    expect(rendered.envelope.data[0].DateTime).toBe('2024-03-10 19:30:00');
    const madrid = await listJobs(ana, `job_id=${late.job_id}`, 'Europe/Madrid');
    expect(madrid.envelope.data[0].DateTime).toBe('2024-03-11 00:30:00');

    const invalid = await listJobs(ana, 'job_id=0&date_from=2024-02-30');
    expect(invalid.envelope).toEqual({ status: 1, data: "Invalid parameter 'date_from': '2024-02-30' is not a valid calendar date and time" });
    const malformed = await listJobs(ana, 'job_id=0&date_to=yesterday');
    expect(malformed.envelope.status).toBe(1);
    expect(malformed.envelope.data).toContain("'date_to'");
    const reversed = await listJobs(ana, 'job_id=0&date_from=2024-03-12&date_to=2024-03-11');
    expect(reversed.envelope).toEqual({ status: 1, data: "Invalid parameter 'date_to': must not be before date_from" });
  });

  it('searches the training description and filters by app_name', async () => {
    const ana = await subscriber();
    const res = await createJob(ana, { newTraining: 1, description: 'Weekly 100% bakery' });
    const bakery = res.envelope.data.job_id as number;
    await newJob(ana);
    const found = await listJobs(ana, 'job_id=0&search=bakery');
    expect(found.envelope.data.map((j: any) => Number(j.Id))).toEqual([bakery]);
    // LIKE wildcards in the search text match literally.
    expect((await listJobs(ana, 'job_id=0&search=100%25')).envelope.data.map((j: any) => Number(j.Id))).toEqual([bakery]);
    expect((await listJobs(ana, 'job_id=0&search=_')).envelope.data).toEqual([]);
    expect((await listJobs(ana, 'job_id=0&app_name=other')).envelope.data).toEqual([]);
    expect((await listJobs(ana, 'job_id=0&app_name=forecast')).envelope.data.length).toBe(2);
  });
});

describe('job life and state rules (current version)', () => {
  it('markPending moves Created to Pending once (the data upload uses it)', async () => {
    const ana = await subscriber();
    const { job_id } = await newJob(ana);
    expect(await ctx.services.jobs.markPending(job_id)).toBe(true);
    expect((await jobRow(job_id))!.status).toBe(1);
    expect(await ctx.services.jobs.markPending(job_id)).toBe(false);
    expect((await listJobs(ana, `job_id=${job_id}`)).envelope.data[0].Status).toBe('1');
  });

  it('aborts only Pending (at once) and Running (flagged for the engine) jobs', async () => {
    const ana = await subscriber();
    for (const [status, name] of [
      [0, 'Created'],
      [3, 'Finished'],
      [4, 'Failed'],
      [5, 'Aborted'],
    ] as const) {
      const { job_id } = await newJob(ana);
      await setJob(job_id, { status });
      const res = await abort(ana, job_id);
      expect(res.statusCode).toBe(200);
      expect(res.envelope).toEqual({ status: 1, data: `Job ${job_id} is ${name}; only a Pending or Running job can be aborted` });
      expect((await jobRow(job_id))!.status).toBe(status);
    }
    const pending = await newJob(ana);
    await setJob(pending.job_id, { status: 1 });
    expect((await abort(ana, pending.job_id)).envelope).toEqual({ status: 0, data: 'success' });
    expect(await jobRow(pending.job_id)).toMatchObject({ status: 5, abort_requested: false });

    const running = await newJob(ana);
    await setJob(running.job_id, { status: 2 });
    expect((await abort(ana, running.job_id)).envelope).toEqual({ status: 0, data: 'success' });
    expect(await jobRow(running.job_id)).toMatchObject({ status: 5, abort_requested: true });

    const missing = await ctx.request({ method: 'POST', url: `${CURRENT}/job_aborts.php?session=${ana.session}`, ...form({}) });
    expect(missing.envelope).toEqual({ status: 1, data: "Missing required parameter 'job_id'" });
  });

  it('reports progress: {Advance}, results (progress=1), status record (progress=2), mean of the app (reqType=1)', async () => {
    const ana = await subscriber();
    const a = await newJob(ana);
    const b = await newJob(ana);
    expect((await progress(ana, `job_id=${a.job_id}`)).envelope).toEqual({ status: 0, data: { Advance: 0 } });
    await setJob(a.job_id, { status: 2, advance: 42.5, nets: '3-8-1' });
    await setJob(b.job_id, { status: 3, advance: 100 });
    expect((await progress(ana, `job_id=${a.job_id}`)).envelope).toEqual({ status: 0, data: { Advance: 42.5 } });

    const results = await progress(ana, `job_id=${a.job_id}&progress=1`);
    expect(results.envelope).toEqual({
      status: 0,
      data: {
        Advance: 42.5,
        Status: '2',
        Results: {
          Training_Id: String(a.training_id),
          Neurons: 0,
          Inputs: 0,
          Outputs: 0,
          LayersRequested: 0,
          LayersCreated: 0,
          SuccessRate: 0,
          Nets: '3-8-1',
        },
      },
    });

    const stat = await progress(ana, `job_id=${a.job_id}&progress=2`);
    expect(stat.envelope).toEqual({
      status: 0,
      data: {
        Advance: 42.5,
        Stat: {
          Job_Id: String(a.job_id),
          Status: '2',
          Status_Name: 'Running',
          Advance: 42.5,
          Abort_Requested: '0',
          Worker: null,
          Text: '',
          Started: null,
          Heartbeat: null,
          Finished: null,
          Explanation: '',
          Selection: null,
        },
      },
    });

    // Every job of this consumer's forecast app: (42.5 + 100) / 2.
    expect((await progress(ana, 'reqType=1&app_name=forecast')).envelope).toEqual({ status: 0, data: { Advance: 71.25 } });
    expect((await progress(ana, 'reqType=1&app_name=unused')).envelope).toEqual({ status: 0, data: { Advance: 0 } });
    expect((await progress(ana, 'reqType=0')).envelope).toEqual({ status: 1, data: "Missing required parameter 'job_id'" });
    expect((await progress(ana, 'reqType=1')).envelope).toEqual({ status: 1, data: "Missing required parameter 'app_name'" });
    expect((await progress(ana, `job_id=${a.job_id}&progress=3`)).envelope).toEqual({
      status: 1,
      data: "Invalid parameter 'progress': must be 0, 1 or 2",
    });
  });

  it('PUT /jobs moves the status only along the state machine and re-targets idle jobs', async () => {
    const ana = await subscriber();
    const { job_id, training_id } = await newJob(ana);
    const other = await newJob(ana);

    expect((await putJob(ana, { job_id, training_id, status: 0 })).envelope).toEqual({ status: 0, data: job_id });
    expect((await putJob(ana, { job_id, training_id: other.training_id })).envelope).toEqual({ status: 0, data: job_id });
    expect((await jobRow(job_id))!.training_id).toBe(other.training_id);

    const noData = await putJob(ana, { job_id, training_id: other.training_id, status: 1 });
    expect(noData.envelope).toEqual({ status: 1, data: `Job ${job_id} has no data yet; upload its data (POST /data) to queue it` });

    await setJob(job_id, { status: 2, advance: 50 });
    const engineOnly = await putJob(ana, { job_id, training_id: other.training_id, status: 3 });
    expect(engineOnly.envelope).toEqual({ status: 1, data: `Job ${job_id}: status Finished is set only by the training engine` });
    const retarget = await putJob(ana, { job_id, training_id, status: 2 });
    expect(retarget.envelope).toEqual({ status: 1, data: `Job ${job_id} is Running; abort it before changing its training or app_name` });

    expect((await putJob(ana, { job_id, training_id: other.training_id, status: 5 })).envelope).toEqual({ status: 0, data: job_id });
    expect(await jobRow(job_id)).toMatchObject({ status: 5, abort_requested: true });

    // From an end state the owner may run the job again.
    expect((await putJob(ana, { job_id, training_id: other.training_id, status: 1 })).envelope).toEqual({ status: 0, data: job_id });
    expect(await jobRow(job_id)).toMatchObject({ status: 1, advance: 0, abort_requested: false, finished_at: null });

    const back = await putJob(ana, { job_id, training_id: other.training_id, status: 0 });
    expect(back.envelope).toEqual({ status: 1, data: `Job ${job_id} cannot go back to Created` });
    const bad = await putJob(ana, { job_id, training_id: other.training_id, status: 9 });
    expect(bad.envelope).toEqual({ status: 1, data: "Invalid parameter 'status': 9 is not a job status (0 to 5)" });
    const missing = await ctx.request({ method: 'PUT', url: `${CURRENT}/jobs.php`, ...multipart({ session: ana.session, tz: TZ, job_id }) });
    expect(missing.envelope).toEqual({ status: 1, data: "Missing required parameter 'training_id'" });
  });

  it('deletes a job and its data only while it is not queued or running', async () => {
    const ana = await subscriber();
    const { job_id } = await newJob(ana);
    await setJob(job_id, { status: 2 });
    const del = (id: number) => ctx.request({ method: 'DELETE', url: `${CURRENT}/jobs.php?session=${ana.session}&tz=${TZ}&job_id=${id}` });
    const delData = (id: number) =>
      ctx.request({ method: 'DELETE', url: `${CURRENT}/job_data.php?session=${ana.session}&tz=${TZ}`, ...form({ job_id: id }) });

    expect((await del(job_id)).envelope).toEqual({ status: 1, data: `Job ${job_id} is Running; abort it before deleting it` });
    expect((await delData(job_id)).envelope).toEqual({ status: 1, data: `Job ${job_id} is Running; abort it before deleting its data` });
    await setJob(job_id, { status: 3 });
    expect((await delData(job_id)).envelope).toEqual({ status: 0, data: 'success' });
    expect((await jobRow(job_id))!.status).toBe(3);
    expect((await del(job_id)).envelope).toEqual({ status: 0, data: 'success' });
    expect(await jobRow(job_id)).toBeUndefined();
    expect((await listJobs(ana, `job_id=${job_id}`)).envelope).toEqual({ status: 0, data: [] });
    expect((await del(job_id)).envelope).toEqual({ status: 1, data: `Job ${job_id} not found` });
  });

  it('the whole life of a job without data: create, list, queue, run, progress, abort, run again, delete', async () => {
    const ana = await subscriber();
    const { job_id } = await newJob(ana);
    expect((await listJobs(ana, `job_id=${job_id}`)).envelope.data[0].Status).toBe('0');
    await ctx.services.jobs.markPending(job_id);
    expect((await listJobs(ana, 'job_id=0&status=1')).envelope.data.map((j: any) => Number(j.Id))).toEqual([job_id]);
    await setJob(job_id, { status: 2, advance: 10 });
    expect((await progress(ana, `job_id=${job_id}`)).envelope.data).toEqual({ Advance: 10 });
    expect((await abort(ana, job_id)).envelope.data).toBe('success');
    expect((await listJobs(ana, 'job_id=0&status_filter=5')).envelope.data.map((j: any) => Number(j.Id))).toEqual([job_id]);
    expect((await putJob(ana, { job_id, training_id: (await jobRow(job_id))!.training_id, status: 1 })).envelope.status).toBe(0);
    await setJob(job_id, { status: 3, advance: 100 });
    expect((await progress(ana, `job_id=${job_id}`)).envelope.data).toEqual({ Advance: 100 });
    const del = await ctx.request({ method: 'DELETE', url: `${CURRENT}/jobs.php?session=${ana.session}&tz=${TZ}&job_id=${job_id}` });
    expect(del.envelope).toEqual({ status: 0, data: 'success' });
  });
});

describe('service hooks for the data area and the training engine', () => {
  it('calls onAbort after an abort, onQueued after markPending, and dataCleaner before deleting', async () => {
    const calls: string[] = [];
    const db = ctx.database.db;
    const service = createJobsService({
      jobs: createJobsRepository(db),
      queue: createJobQueueRepository(db),
      trainings: createTrainingsRepository(db),
      clock: ctx.clock,
      hasActiveSubscription: async () => true,
      dataCleaner: async (id) => void calls.push(`clean ${id}`),
      onAbort: (id) => void calls.push(`abort ${id}`),
      onQueued: async (id) => {
        calls.push(`queued ${id}`);
        throw new Error('a failing listener does not fail the request');
      },
    });
    const ana = await subscriber();
    const { job_id } = await newJob(ana);
    const caller = { userId: ana.id, role: 'consumer' as const, name: 'Ana', lastname: 'Tester', email: ana.email, clientId: null, sessionId: 1, token: '' };
    expect(await service.markPending(job_id)).toBe(true);
    await service.abort(caller, job_id);
    await service.deleteData(caller, job_id);
    await service.delete(caller, job_id);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).toEqual([`queued ${job_id}`, `abort ${job_id}`, `clean ${job_id}`, `clean ${job_id}`]);
  });
});

describe('consumers are isolated; administrators see all', () => {
  it("consumer B never sees nor touches consumer A's jobs", async () => {
    const ana = await subscriber('Ana');
    const bea = await subscriber('Bea');
    const a = await newJob(ana);
    const b = await newJob(bea);
    await setJob(a.job_id, { status: 2 });

    expect((await listJobs(bea)).envelope.data.map((j: any) => Number(j.Id))).toEqual([b.job_id]);
    expect((await listJobs(bea, `job_id=${a.job_id}`)).envelope).toEqual({ status: 0, data: [] });
    const notFound = { status: 1, data: `Job ${a.job_id} not found` };
    expect((await abort(bea, a.job_id)).envelope).toEqual(notFound);
    expect((await progress(bea, `job_id=${a.job_id}`)).envelope).toEqual(notFound);
    expect((await putJob(bea, { job_id: a.job_id, training_id: b.training_id, status: 5 })).envelope).toEqual(notFound);
    expect(
      (await ctx.request({ method: 'DELETE', url: `${CURRENT}/jobs.php?session=${bea.session}&tz=${TZ}&job_id=${a.job_id}` })).envelope,
    ).toEqual(notFound);
    expect(
      (await ctx.request({ method: 'DELETE', url: `${CURRENT}/job_data.php?session=${bea.session}&tz=${TZ}`, ...form({ job_id: a.job_id }) })).envelope,
    ).toEqual(notFound);
    // Re-targeting one's own job to someone else's training is refused too.
    expect((await putJob(bea, { job_id: b.job_id, training_id: a.training_id })).envelope).toEqual({
      status: 1,
      data: `Training ${a.training_id} not found`,
    });
    expect(await jobRow(a.job_id)).toMatchObject({ status: 2, training_id: a.training_id });

    const admin = await ctx.createUser({ role: 'admin' });
    const seen = (await listJobs(admin)).envelope.data.map((j: any) => Number(j.Id));
    expect(seen).toEqual(expect.arrayContaining([a.job_id, b.job_id]));
    expect((await abort(admin, a.job_id)).envelope).toEqual({ status: 0, data: 'success' });
  });

  it('summaries count running jobs and trained knowledges per consumer (all for administrators)', async () => {
    const ana = await subscriber('Ana');
    const bea = await subscriber('Bea');
    const a = await newJob(ana);
    await newJob(ana);
    const b = await newJob(bea);
    await setJob(a.job_id, { status: 2 });
    await setJob(b.job_id, { status: 2 });
    await ctx.database.db.updateTable('trainings').set({ status: 2 }).where('id', '=', a.training_id).execute();
    const summary = async (user: TestUser) =>
      (await ctx.request({ method: 'GET', url: `${CURRENT}/summaries.php?session=${user.session}` })).envelope.data;
    expect(await summary(ana)).toMatchObject({ jobs: { running: 1 }, knowledges: 1 });
    expect(await summary(bea)).toMatchObject({ jobs: { running: 1 }, knowledges: 0 });
    const admin = await ctx.createUser({ role: 'admin' });
    const all = await summary(admin);
    expect(all.jobs.running).toBeGreaterThanOrEqual(2);
    expect(all.knowledges).toBeGreaterThanOrEqual(1);
  });
});

describe('older version', () => {
  it('POST /jobs.php takes training_id and app_name=forecast and answers the job id', async () => {
    const ana = await subscriber();
    const { training_id } = await newJob(ana);
    const res = await ctx.request({ method: 'POST', url: `${OLDER}/jobs.php`, ...form({ session: ana.session, training_id, app_name: 'forecast' }) });
    expect(res.envelope.status).toBe(0);
    expect(typeof res.envelope.data).toBe('number');
    expect(await jobRow(res.envelope.data)).toMatchObject({ training_id, app_name: 'forecast', user_id: ana.id });

    const wrongApp = await ctx.request({ method: 'POST', url: `${OLDER}/jobs.php`, ...form({ session: ana.session, training_id, app_name: 'chat' }) });
    expect(wrongApp.envelope).toEqual({ status: 1, data: "Invalid parameter 'app_name': must be 'forecast'" });
    const noTraining = await ctx.request({ method: 'POST', url: `${OLDER}/jobs.php`, ...form({ session: ana.session, app_name: 'forecast' }) });
    expect(noTraining.envelope).toEqual({ status: 1, data: "Missing required parameter 'training_id'" });
    const unsubscribed = await ctx.createUser();
    const refused = await ctx.request({ method: 'POST', url: `${OLDER}/jobs.php`, ...form({ session: unsubscribed.session, training_id, app_name: 'forecast' }) });
    expect(refused.envelope).toEqual({ status: 1, data: "Forbidden: you have no active subscription to application 'forecast'" });
  });

  it('GET /jobs.php answers the same Job records; DELETE /jobs.php takes id', async () => {
    const ana = await subscriber();
    const { job_id } = await newJob(ana);
    const older = await ctx.request({ method: 'GET', url: `${OLDER}/jobs.php?session=${ana.session}&tz=${TZ}&job_id=0&status=3` });
    const current = await listJobs(ana);
    expect(older.envelope).toEqual(current.envelope);
    expect(older.envelope.data).toHaveLength(1);
    const del = await ctx.request({ method: 'DELETE', url: `${OLDER}/jobs.php?session=${ana.session}&id=${job_id}` });
    expect(del.envelope).toEqual({ status: 0, data: 'success' });
    expect(await jobRow(job_id)).toBeUndefined();
    const unknown = await ctx.request({ method: 'POST', url: `${OLDER}/job_aborts.php?session=${ana.session}`, ...form({ job_id }) });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.envelope.status).toBe(1);
  });
});
