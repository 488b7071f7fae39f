import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobsRepository } from '../../src/domain/jobs/jobs.repository.js';
import { createTrainingsRepository } from '../../src/domain/trainings/trainings.repository.js';
import { createTrainingsService } from '../../src/domain/trainings/trainings.service.js';
import { factories } from '../support/factories.js';
import { CURRENT, OLDER, createTestContext, form, multipart, type TestContext, type TestUser } from '../support/helper.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const TZ = 'Europe/Madrid';

async function createTraining(user: TestUser, description: string, base = CURRENT): Promise<number> {
  const res = await ctx.request({ method: 'POST', url: `${base}/trainings.php?tz=${TZ}`, ...multipart({ session: user.session, description }) });
  expect(res.envelope.status).toBe(0);
  return res.envelope.data;
}

const getTrainings = (user: TestUser, query: string, tz = TZ) =>
  ctx.request({ method: 'GET', url: `${CURRENT}/trainings.php?session=${user.session}&tz=${encodeURIComponent(tz)}&${query}` });

const putTraining = (user: TestUser, fields: Record<string, string | number>) =>
  ctx.request({ method: 'PUT', url: `${CURRENT}/trainings.php?tz=${TZ}`, ...multipart({ session: user.session, ...fields }) });

const patchTraining = (user: TestUser, fields: Record<string, string | number>) =>
  ctx.request({ method: 'PATCH', url: `${CURRENT}/trainings.php?tz=${TZ}`, ...multipart({ session: user.session, ...fields }) });

async function setTraining(id: number, patch: { status?: number; created_at?: Date; app_name?: string }) {
  await ctx.database.db.updateTable('trainings').set(patch).where('id', '=', id).execute();
}

/** A job of the training inserted directly (jobs.test.ts covers creating them through HTTP). */
const jobOf = async (user: TestUser, trainingId: number, status = 0, appName = 'forecast'): Promise<number> =>
  (await factories(ctx.database.db).job(user, { training_id: trainingId, status, app_name: appName })).jobId;

describe('POST /trainings', () => {
  it('creates a training and answers its id, in both versions', async () => {
    const ana = await ctx.createUser({ name: 'Ana' });
    const id = await createTraining(ana, 'Weekly sales');
    const older = await createTraining(ana, 'Older', OLDER);
    expect(Number.isInteger(id) && older > id).toBe(true);
    const row = await ctx.database.db.selectFrom('trainings').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ user_id: ana.id, description: 'Weekly sales', status: 0, app_name: '' });
  });

  it('names the missing description and tz', async () => {
    const ana = await ctx.createUser();
    const noDescription = await ctx.request({ method: 'POST', url: `${CURRENT}/trainings.php?tz=${TZ}`, ...multipart({ session: ana.session }) });
    expect(noDescription.envelope).toEqual({ status: 1, data: "Missing required parameter 'description'" });
    const noTz = await ctx.request({ method: 'POST', url: `${CURRENT}/trainings.php`, ...multipart({ session: ana.session, description: 'x' }) });
    expect(noTz.envelope).toEqual({ status: 1, data: "Missing required parameter 'tz'" });
    const noSession = await ctx.request({ method: 'POST', url: `${CURRENT}/trainings.php?tz=${TZ}`, ...multipart({ description: 'x' }) });
    expect(noSession.envelope).toEqual({ status: 1, data: "Missing required parameter 'session'" });
  });

  it('the older version has POST /trainings.php only', async () => {
    const ana = await ctx.createUser();
    const res = await ctx.request({ method: 'GET', url: `${OLDER}/trainings.php?session=${ana.session}&tz=${TZ}&mode=1` });
    expect(res.statusCode).toBe(404);
    expect(res.envelope.status).toBe(1);
    for (const url of ['/training_data.php', '/trainings.php']) {
      const del = await ctx.request({ method: 'DELETE', url: `${OLDER}${url}?session=${ana.session}&training_id=1` });
      expect(del.statusCode).toBe(404);
    }
  });
});

describe('GET /trainings', () => {
  it('legacy mode: by id, or by job_id and app_name, with the legacy field names', async () => {
    const ana = await ctx.createUser();
    const id = await createTraining(ana, 'Legacy');
    await setTraining(id, { app_name: 'forecast' });
    const put = await putTraining(ana, { update: 1, id, app_name: 'forecast', neurons: 24, inputs: 12, outputs: 1, layers_requested: 3, layers_created: 2, success_rate: 87 });
    expect(put.envelope).toEqual({ status: 0, data: 'success' });
    const expected = { status: 0, data: [{ Neurons: 24, Inputs: 12, Outputs: 1, LayersRequested: 3, LayersCreated: 2 }] };
    expect((await getTrainings(ana, `id=${id}`)).envelope).toEqual(expected);
    const jobId = await jobOf(ana, id);
    expect((await getTrainings(ana, `job_id=${jobId}&app_name=forecast`)).envelope).toEqual(expected);
    expect((await getTrainings(ana, `job_id=${jobId}&app_name=other`)).envelope).toEqual({ status: 0, data: [] });
    expect((await getTrainings(ana, `job_id=${jobId}`)).envelope).toEqual({ status: 1, data: "Missing required parameter 'app_name'" });
    expect((await getTrainings(ana, 'app_name=forecast')).envelope).toEqual({ status: 1, data: "Missing required parameter 'job_id'" });
    expect((await getTrainings(ana, `id=${id + 1000}`)).envelope).toEqual({ status: 0, data: [] });
  });

  it('mode=1: records with the date in tz, filters by status, search, dates, limit and sort', async () => {
    const ana = await ctx.createUser();
    const a = await createTraining(ana, 'Alpha bakery');
    const b = await createTraining(ana, 'Beta shop');
    const c = await createTraining(ana, 'Gamma bakery');
    // 23:30 UTC on 10 March 2024: the 11th in Madrid, the 10th in New York.
    await setTraining(a, { created_at: new Date('2024-03-10T23:30:00Z'), status: 2, app_name: 'forecast' });
    await setTraining(b, { created_at: new Date('2024-03-12T10:00:00Z') });
    await setTraining(c, { created_at: new Date('2024-03-14T10:00:00Z') });

    const one = await getTrainings(ana, `mode=1&status=2`);
    expect(one.envelope).toEqual({
      status: 0,
      data: [
        {
          id: a,
          app_name: 'forecast',
          description: 'Alpha bakery',
          status: 2,
          date: '2024-03-11 00:30:00',
          neurons: 0,
          inputs: 0,
          outputs: 0,
          layers_requested: 0,
          layers_created: 0,
          success_rate: 0,
        },
      ],
    });
    expect((await getTrainings(ana, 'mode=1&status=2', 'America/New_York')).envelope.data[0].date).toBe('2024-03-10 19:30:00');

    const ids = async (query: string, tz = TZ) => (await getTrainings(ana, `mode=1&${query}`, tz)).envelope.data.map((t: any) => t.id);
    expect(await ids('')).toEqual([c, b, a]);
    expect(await ids('sort=asc')).toEqual([a, b, c]);
    expect(await ids('sort=DESC&limit=2')).toEqual([c, b]);
    expect(await ids('limit=0')).toEqual([c, b, a]);
    expect(await ids('search=bakery')).toEqual([c, a]);
    expect(await ids('status=0')).toEqual([c, b]);
    expect(await ids('date_from=2024-03-11&date_to=2024-03-11')).toEqual([a]);
    expect(await ids('date_from=2024-03-11&date_to=2024-03-11', 'America/New_York')).toEqual([]);
    expect(await ids('date_to=2024-03-10', 'America/New_York')).toEqual([a]);
    expect(await ids('date_from=2024-03-12 11:00:00')).toEqual([c, b]);

    expect((await getTrainings(ana, 'mode=1&sort=up')).envelope).toEqual({ status: 1, data: "Invalid parameter 'sort': must be 'asc' or 'desc'" });
    expect((await getTrainings(ana, 'mode=1&status=9')).envelope).toEqual({ status: 1, data: "Invalid parameter 'status': must be a training status 0 to 3" });
    expect((await getTrainings(ana, 'mode=2')).envelope.status).toBe(1);
    const noTz = await ctx.request({ method: 'GET', url: `${CURRENT}/trainings.php?session=${ana.session}&mode=1` });
    expect(noTz.envelope).toEqual({ status: 1, data: "Missing required parameter 'tz'" });
  });
});

describe('PUT and PATCH /trainings', () => {
  it('update=0 changes only the description; otherwise all figures', async () => {
    const ana = await ctx.createUser();
    const id = await createTraining(ana, 'Before');
    expect((await putTraining(ana, { update: 0, id, description: 'After' })).envelope).toEqual({ status: 0, data: 'success' });
    expect((await putTraining(ana, { id, description: 'Default update is 0' })).envelope.status).toBe(0);
    const noDescription = await putTraining(ana, { update: 0, id });
    expect(noDescription.envelope).toEqual({ status: 1, data: "Missing required parameter 'description'" });
    const noApp = await putTraining(ana, { update: 1, id, neurons: 5 });
    expect(noApp.envelope).toEqual({ status: 1, data: "Missing required parameter 'app_name'" });
    const noId = await putTraining(ana, { update: 0, description: 'x' });
    expect(noId.envelope).toEqual({ status: 1, data: 'Training 0 not found' });

    const figures = await putTraining(ana, { update: 1, id, app_name: 'forecast', neurons: 8, inputs: 4, outputs: 2, layers_requested: 2, layers_created: 2, success_rate: 91.5 });
    expect(figures.envelope).toEqual({ status: 0, data: 'success' });
    const [row] = (await getTrainings(ana, 'mode=1')).envelope.data;
    expect(row).toMatchObject({ id, description: 'Default update is 0', app_name: 'forecast', neurons: 8, inputs: 4, outputs: 2, layers_requested: 2, layers_created: 2, success_rate: 91.5 });
  });

  it('PATCH sets a training status 0 to 3', async () => {
    const ana = await ctx.createUser();
    const id = await createTraining(ana, 'Status');
    expect((await patchTraining(ana, { id, status: 2 })).envelope).toEqual({ status: 0, data: 'success' });
    expect((await getTrainings(ana, 'mode=1')).envelope.data[0].status).toBe(2);
    expect((await patchTraining(ana, { id, status: 4 })).envelope).toEqual({ status: 1, data: "Invalid parameter 'status': must be a training status 0 to 3" });
    expect((await patchTraining(ana, { status: 1 })).envelope).toEqual({ status: 1, data: 'Training 0 not found' });
  });
});

describe('DELETE /training_data', () => {
  it("cleans every job's data and keeps the training and its jobs; refused while a job is queued or running", async () => {
    const cleaned: number[] = [];
    const db = ctx.database.db;
    const service = createTrainingsService({
      trainings: createTrainingsRepository(db),
      jobs: createJobsRepository(db),
      dataCleaner: async (jobId) => void cleaned.push(jobId),
    });
    const ana = await ctx.createUser();
    const caller = { userId: ana.id, role: 'consumer' as const, name: '', lastname: '', email: ana.email, clientId: null, sessionId: 0, token: '' };
    const id = await createTraining(ana, 'With jobs');
    const first = await jobOf(ana, id, 3);
    const second = await jobOf(ana, id, 2);
    await expect(service.deleteData(caller, id)).rejects.toThrow(`Job ${second} of training ${id} is Running; abort it before deleting the training's data`);
    expect(cleaned).toEqual([]);
    await db.updateTable('jobs').set({ status: 5 }).where('id', '=', second).execute();
    await service.deleteData(caller, id);
    expect(cleaned).toEqual([first, second]);

    const res = await ctx.request({ method: 'DELETE', url: `${CURRENT}/training_data.php?session=${ana.session}&training_id=${id}` });
    expect(res.envelope).toEqual({ status: 0, data: 'success' });
    const jobs = await db.selectFrom('jobs').select('id').where('training_id', '=', id).execute();
    expect(jobs.map((j) => j.id).sort()).toEqual([first, second].sort());
    expect((await getTrainings(ana, `id=${id}`)).envelope.data).toHaveLength(1);
    const missing = await ctx.request({ method: 'DELETE', url: `${CURRENT}/training_data.php?session=${ana.session}` });
    expect(missing.envelope).toEqual({ status: 1, data: "Missing required parameter 'training_id'" });
  });
});

describe('consumers are isolated; administrators see all', () => {
  it("consumer B never sees nor touches consumer A's trainings", async () => {
    const ana = await ctx.createUser({ name: 'Ana' });
    const bea = await ctx.createUser({ name: 'Bea' });
    const a = await createTraining(ana, 'Ana secret');
    await setTraining(a, { app_name: 'forecast' });
    const b = await createTraining(bea, 'Bea own');
    const jobA = await jobOf(ana, a);

    expect((await getTrainings(bea, 'mode=1')).envelope.data.map((t: any) => t.id)).toEqual([b]);
    expect((await getTrainings(bea, 'mode=1&search=secret')).envelope.data).toEqual([]);
    expect((await getTrainings(bea, `id=${a}`)).envelope).toEqual({ status: 0, data: [] });
    expect((await getTrainings(bea, `job_id=${jobA}&app_name=forecast`)).envelope).toEqual({ status: 0, data: [] });
    const notFound = { status: 1, data: `Training ${a} not found` };
    expect((await putTraining(bea, { update: 0, id: a, description: 'hacked' })).envelope).toEqual(notFound);
    expect((await putTraining(bea, { update: 1, id: a, app_name: 'forecast' })).envelope).toEqual(notFound);
    expect((await patchTraining(bea, { id: a, status: 3 })).envelope).toEqual(notFound);
    expect(
      (await ctx.request({ method: 'DELETE', url: `${CURRENT}/training_data.php?session=${bea.session}&training_id=${a}` })).envelope,
    ).toEqual(notFound);
    const untouched = await ctx.database.db.selectFrom('trainings').selectAll().where('id', '=', a).executeTakeFirstOrThrow();
    expect(untouched).toMatchObject({ description: 'Ana secret', status: 0 });

    const admin = await ctx.createUser({ role: 'admin' });
    const all = (await getTrainings(admin, 'mode=1')).envelope.data.map((t: any) => t.id);
    expect(all).toEqual(expect.arrayContaining([a, b]));
    expect((await patchTraining(admin, { id: a, status: 1 })).envelope).toEqual({ status: 0, data: 'success' });
    expect((await getTrainings(admin, `id=${a}`)).envelope.data).toHaveLength(1);
  });
});

describe('form encodings', () => {
  it('PATCH accepts an urlencoded body too', async () => {
    const ana = await ctx.createUser();
    const id = await createTraining(ana, 'Urlencoded');
    const res = await ctx.request({ method: 'PATCH', url: `${CURRENT}/trainings.php?tz=${TZ}`, ...form({ session: ana.session, id, status: 3 }) });
    expect(res.envelope).toEqual({ status: 0, data: 'success' });
  });
});
