import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppRecordsRepository } from '../../src/domain/model-records/app-records.repository.js';
import { createAppRecordsService } from '../../src/domain/model-records/app-records.service.js';
import { createNetworksRepository } from '../../src/domain/model-records/networks.repository.js';
import { createNetworksService } from '../../src/domain/model-records/networks.service.js';
import { systemClock } from '../../src/domain/ports.js';
import { createTrainingPool } from '../../src/training/run/pool.js';
import { predict } from '../../src/training/run/predict.js';
import type { TrainedModel } from '../../src/training/core/types.js';
import { factories } from '../support/factories.js';
import { CURRENT, OLDER, createTestContext, form, type TestContext, type TestUser } from '../support/helper.js';

let ctx: TestContext;
let alice: TestUser;
let bob: TestUser;
let admin: TestUser;

beforeAll(async () => {
  ctx = await createTestContext();
  [alice, bob, admin] = await Promise.all([ctx.createUser(), ctx.createUser(), ctx.createUser({ role: 'admin' })]);
});
afterAll(async () => {
  await ctx?.close();
});

/** A training and a job of it, written straight to the tables (the jobs area has its own tests). */
const jobOf = (user: TestUser, options: { app?: string; status?: number } = {}) =>
  factories(ctx.database.db).job(user, { app_name: options.app ?? 'forecast', status: options.status ?? 0, trainingValues: { description: 'test' } });

const get = (path: string, query: Record<string, string | number>) =>
  ctx.request({ method: 'GET', url: `${CURRENT}/${path}?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString()}` });
const send = (method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body: Record<string, string | number>, prefix = CURRENT) =>
  ctx.request({ method, url: `${prefix}/${path}?tz=Europe/Madrid`, ...form(body) });

const countUsers = async () => (await ctx.database.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;

describe('App records (/app)', () => {
  it('creates a record with defaults (simple=0) and lists it with every number as a string', async () => {
    const app = `app-${alice.id}-a`;
    const created = await send('POST', 'app.php', { session: alice.session, app_id: app });
    expect(created.envelope.status).toBe(0);
    const id = created.envelope.data as number;
    expect(id).toBeGreaterThan(0);

    const res = await get('app.php', { session: alice.session, tz: 'UTC', app_id: app, fields: '*', filters: '' });
    expect(res.envelope.status).toBe(0);
    expect(res.envelope.data).toHaveLength(1);
    expect(res.envelope.data[0]).toMatchObject({
      Id: String(id),
      App_Name: app,
      Job_Id: '0',
      Training_Id: '0',
      LayersRequested: '0',
      LearningRate: '0',
      RequestType: '0',
      DataRowsToConsider: '0',
      NoNegatives: '0',
      IncreaseMargin: '0',
      DecreaseMargin: '0',
      DeviationTarget: '10',
      DeviatedTarget: '0',
      Probability: null,
    });
    expect(res.envelope.data[0].DateTime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

    const picked = await get('app.php', { session: alice.session, tz: 'UTC', app_id: app, fields: 'job_id, LearningRate', filters: '' });
    expect(picked.envelope.data).toEqual([{ Job_Id: '0', LearningRate: '0' }]);
  });

  it('sets the parameters named in fields to params (simple=1) for a job, and finds the record by job id and id', async () => {
    const { jobId, trainingId } = await jobOf(alice);
    const created = await send('POST', 'app.php', {
      session: alice.session,
      app_id: 'forecast',
      simple: 1,
      fields: 'LayersRequested,LearningRate,NoNegatives,IncreaseMargin,DeviatedTarget,Job_Id',
      params: `2, 0.1, 1, 5.5, 20, ${jobId}`,
    });
    expect(created.envelope.status).toBe(0);
    const byJob = await get('app.php', { session: alice.session, tz: 'UTC', app_id: 'forecast', type: 1, job_id: jobId, fields: '*' });
    expect(byJob.envelope.data).toEqual([
      expect.objectContaining({
        Id: String(created.envelope.data),
        Job_Id: String(jobId),
        Training_Id: String(trainingId),
        LayersRequested: '2',
        LearningRate: '0.1',
        NoNegatives: '1',
        IncreaseMargin: '5.5',
        DeviatedTarget: '20',
      }),
    ]);
    const byId = await get('app.php', { session: alice.session, tz: 'UTC', app_id: 'forecast', type: 1, id: created.envelope.data, fields: 'Id' });
    expect(byId.envelope.data).toEqual([{ Id: String(created.envelope.data) }]);

    // The runner reads the same record as engine parameters.
    expect(await ctx.services.appRecords.paramsForJob(jobId)).toEqual({
      layersRequested: 2,
      learningRate: 0.1,
      dataRowsToConsider: undefined,
      noNegatives: true,
      increaseMargin: 5.5,
      decreaseMargin: 0,
      deviationTarget: 10,
      deviatedTarget: 20,
      modelFamily: 'auto',
    });
  });

  it('takes ModelFamily (an addition): empty or auto = backtest selection, network = the legacy network, anything else refused', async () => {
    const app = `family-${alice.id}`;
    const create = (params: string) => send('POST', 'app.php', { session: alice.session, app_id: app, simple: 1, fields: 'Job_Id,ModelFamily', params });
    const { jobId } = await jobOf(alice, { app });
    const network = await create(`${jobId}, Network`);
    expect(network.envelope.status).toBe(0);
    const read = async () => (await get('app.php', { session: alice.session, tz: 'UTC', app_id: app, type: 1, job_id: jobId, fields: 'ModelFamily' })).envelope.data;
    expect(await read()).toEqual([{ ModelFamily: 'network' }]);
    expect((await ctx.services.appRecords.paramsForJob(jobId)).modelFamily).toBe('network');
    // Filters see it like any other field.
    const filtered = await get('app.php', { session: alice.session, tz: 'UTC', app_id: app, fields: 'Id', filters: "ModelFamily = 'network'" });
    expect(filtered.envelope.data).toEqual([{ Id: String(network.envelope.data) }]);

    const empty = await send('POST', 'app.php', { session: alice.session, app_id: app, simple: 1, fields: 'Job_Id,ModelFamily,LayersRequested', params: `${jobId},,1` });
    expect(empty.envelope.status).toBe(0);
    expect(await read()).toEqual([{ ModelFamily: 'auto' }]);
    expect((await ctx.services.appRecords.paramsForJob(jobId)).modelFamily).toBe('auto');
    expect((await create(`${jobId},auto`)).envelope.status).toBe(0);

    const wrong = await create(`${jobId},sarima`);
    expect(wrong.envelope).toEqual({
      status: 1,
      data: "Invalid parameter 'params': value 2 for 'ModelFamily' must be 'auto' (or empty: every model family, chosen by backtest) or 'network' (the legacy single neural network), not 'sarima'",
    });
    // A record with defaults (simple=0) is automatic.
    await send('POST', 'app.php', { session: alice.session, app_id: `${app}-d` });
    expect((await get('app.php', { session: alice.session, tz: 'UTC', app_id: `${app}-d`, fields: 'ModelFamily', filters: '' })).envelope.data).toEqual([{ ModelFamily: 'auto' }]);
  });

  it('gives a job without its own record the newest template of its app (type 2 lists templates only)', async () => {
    const app = `tmpl-${alice.id}`;
    const { jobId } = await jobOf(alice, { app });
    const none = await ctx.services.appRecords.paramsForJob(jobId);
    expect(none).toEqual({});
    await send('POST', 'app.php', { session: alice.session, app_id: app, simple: 1, fields: 'LayersRequested', params: '1' });
    await send('POST', 'app.php', { session: alice.session, app_id: app, simple: 1, fields: 'LayersRequested,DataRowsToConsider', params: '3,500' });
    await send('POST', 'app.php', { session: alice.session, app_id: app, simple: 1, fields: 'Job_Id,LayersRequested', params: `${jobId},4` });
    const templates = await get('app.php', { session: alice.session, tz: 'UTC', app_id: app, type: 2, fields: 'LayersRequested,Job_Id', filters: '' });
    expect(templates.envelope.data).toEqual([
      { LayersRequested: '3', Job_Id: '0' },
      { LayersRequested: '1', Job_Id: '0' },
    ]);
    expect((await ctx.services.appRecords.paramsForJob(jobId)).layersRequested).toBe(4);

    const { jobId: other } = await jobOf(alice, { app });
    expect(await ctx.services.appRecords.paramsForJob(other)).toMatchObject({ layersRequested: 3, dataRowsToConsider: 500 });
    // Another user's templates never apply.
    const { jobId: bobsJob } = await jobOf(bob, { app });
    expect(await ctx.services.appRecords.paramsForJob(bobsJob)).toEqual({});
  });

  it('filters through the shared filter language and refuses injection', async () => {
    const app = `filt-${alice.id}`;
    await send('POST', 'app.php', { session: alice.session, app_id: app, simple: 1, fields: 'LayersRequested', params: '2' });
    await send('POST', 'app.php', { session: alice.session, app_id: app, simple: 1, fields: 'LayersRequested', params: '3' });
    const query = { session: alice.session, tz: 'UTC', app_id: app, fields: 'LayersRequested' };
    const two = await get('app.php', { ...query, filters: 'LayersRequested = 2' });
    expect(two.envelope.data).toEqual([{ LayersRequested: '2' }]);
    const many = await get('app.php', { ...query, filters: "LayersRequested >= 2 AND Host = ''" });
    expect(many.envelope.data).toHaveLength(2);

    const before = await countUsers();
    for (const filters of ["LayersRequested = 2; drop table users", "1=1 OR Host = '' UNION SELECT password FROM users", 'password_hash = 1']) {
      const res = await get('app.php', { ...query, filters });
      expect(res.envelope.status).toBe(1);
      expect(res.envelope.data).toMatch(/^Invalid parameter 'filters'/);
    }
    const badField = await get('app.php', { ...query, fields: 'LayersRequested, (select 1)', filters: '' });
    expect(badField.envelope.status).toBe(1);
    expect(badField.envelope.data).toMatch(/^Invalid parameter 'fields'/);
    expect(await countUsers()).toBe(before);
  });

  it('answers clear errors for missing and invalid parameters', async () => {
    const base = { session: alice.session, tz: 'UTC', app_id: 'forecast', fields: '*' };
    // No filters (absent or empty) is no condition.
    expect((await get('app.php', { ...base, app_id: `none-${alice.id}` })).envelope).toEqual({ status: 0, data: [] });
    expect((await get('app.php', { ...base, type: 1 })).envelope).toEqual({ status: 1, data: "Missing required parameter 'id'" });
    expect((await get('app.php', { ...base, type: 3, filters: '' })).envelope.data).toBe("Invalid parameter 'type': must be 0 (apps), 1 (by id or job id) or 2 (parameters)");
    expect((await get('app.php', { ...base, type: 1, id: 99999999 })).envelope).toEqual({ status: 1, data: "App record of app 'forecast' with id 99999999 not found" });
    expect((await get('app.php', { session: alice.session, app_id: 'x', fields: '*', filters: '' })).envelope.data).toBe("Missing required parameter 'tz'");
    expect((await get('app.php', { ...base, session: 'nope', filters: '' })).envelope).toEqual({ status: 1, data: 'Invalid or expired session' });

    const post = (body: Record<string, string | number>) => send('POST', 'app.php', { session: alice.session, app_id: 'forecast', ...body });
    expect((await post({ simple: 1, params: '2' })).envelope.data).toBe("Missing required parameter 'fields'");
    expect((await post({ simple: 1, fields: 'LayersRequested' })).envelope.data).toBe("Missing required parameter 'params'");
    expect((await post({ simple: 1, fields: 'LayersRequested,LearningRate', params: '2' })).envelope.data).toBe(
      "Invalid parameter 'params': expected 2 comma-separated value(s), one per field, but got 1",
    );
    expect((await post({ simple: 1, fields: 'LayersRequested', params: '9' })).envelope.data).toBe(
      "Invalid parameter 'params': value 1 for 'LayersRequested' must be between 0 and 5",
    );
    expect((await post({ simple: 1, fields: 'LearningRate', params: '1.5' })).envelope.data).toMatch(/^Invalid parameter 'params': value 1 for 'LearningRate' must be between 0 and 1/);
    expect((await post({ simple: 1, fields: 'LearningRate', params: 'abc' })).envelope.data).toMatch(/must be a number/);
    expect((await post({ simple: 1, fields: 'Status', params: '1' })).envelope.data).toMatch(/^Invalid parameter 'fields': unknown column 'Status'/);
    expect((await post({ simple: 1, fields: 'LayersRequested,layersrequested', params: '1,2' })).envelope.data).toBe("Invalid parameter 'fields': 'LayersRequested' is given twice");
    expect((await post({ simple: 2 })).envelope.data).toBe("Invalid parameter 'simple': must be 0 or 1");
    const { jobId } = await jobOf(alice);
    expect((await post({ app_id: 'other', simple: 1, fields: 'Job_Id', params: String(jobId) })).envelope.data).toBe(
      `Invalid parameter 'app_id': job ${jobId} belongs to app 'forecast', not 'other'`,
    );
  });

  it('reports the run state with PUT (creating the job record) and copies request_type 1 figures to the training', async () => {
    const { jobId, trainingId } = await jobOf(alice);
    const put = (body: Record<string, string | number>) =>
      send('PUT', 'app.php', { session: alice.session, tz: 'UTC', app_name: 'forecast', host: 'trainer-1', ...body });
    expect((await put({ job_id: jobId, status: 2, request_type: 0, pid: 4242 })).envelope).toEqual({ status: 0, data: 'success' });
    const rec = await get('app.php', { session: alice.session, tz: 'UTC', app_id: 'forecast', type: 1, job_id: jobId, fields: 'Id,Status,Host,Pid,RequestType,Training_Id' });
    expect(rec.envelope.data).toEqual([
      { Id: expect.any(String), Status: '2', Host: 'trainer-1', Pid: '4242', RequestType: '0', Training_Id: String(trainingId) },
    ]);
    const id = Number(rec.envelope.data[0].Id);

    expect((await put({ id, request_type: 1, neurons: 16 })).envelope).toEqual({ status: 1, data: "Missing required parameter 'inputs'" });
    const figures = { neurons: 32, inputs: 10, outputs: 1, layers_requested: 2, layers_created: 2 };
    expect((await put({ id, status: 3, request_type: 1, pid: 4242, ...figures })).envelope).toEqual({ status: 0, data: 'success' });
    const training = await ctx.database.db.selectFrom('trainings').selectAll().where('id', '=', trainingId).executeTakeFirstOrThrow();
    expect(training).toMatchObject(figures);
    // The same job record was updated, not a second one created.
    const all = await get('app.php', { session: alice.session, tz: 'UTC', app_id: 'forecast', fields: 'Id', filters: `Job_Id = ${jobId}` });
    expect(all.envelope.data).toEqual([{ Id: String(id) }]);

    expect((await put({ request_type: 0 })).envelope).toEqual({ status: 1, data: "Missing required parameter 'id'" });
    expect((await put({ id, request_type: 3 })).envelope.data).toBe("Invalid parameter 'request_type': must be 0, 1 or 2");
    expect((await put({ id, request_type: 0, host: '' })).envelope.data).toBe("Missing required parameter 'host'");
    expect((await put({ id, app_name: 'other', request_type: 0 })).envelope.data).toBe(`App record of app 'other' with id ${id} not found`);
    expect((await put({ id, request_type: 1, ...figures, neurons: -1 })).envelope.data).toBe("Invalid parameter 'neurons': must not be negative");
    // Another consumer cannot touch it, an administrator can.
    const bobPut = await send('PUT', 'app.php', { session: bob.session, tz: 'UTC', app_name: 'forecast', host: 'h', id, request_type: 0 });
    expect(bobPut.envelope.data).toBe(`App record of app 'forecast' with id ${id} not found`);
    const bobJob = await send('PUT', 'app.php', { session: bob.session, tz: 'UTC', app_name: 'forecast', host: 'h', job_id: jobId, request_type: 0 });
    expect(bobJob.envelope.data).toBe(`Job ${jobId} not found`);
    const adminPut = await send('PUT', 'app.php', { session: admin.session, tz: 'UTC', app_name: 'forecast', host: 'admin-host', id, request_type: 0 });
    expect(adminPut.envelope).toEqual({ status: 0, data: 'success' });
  });

  it('sets the probability with PATCH, between 0 and 1, on own records only', async () => {
    const app = `prob-${alice.id}`;
    const id = (await send('POST', 'app.php', { session: alice.session, app_id: app })).envelope.data as number;
    const patch = (user: TestUser, probability: string | number, appId = app) =>
      send('PATCH', 'app.php', { session: user.session, tz: 'UTC', app_id: appId, id, probability });
    expect((await patch(alice, 0.75)).envelope).toEqual({ status: 0, data: 'success' });
    const res = await get('app.php', { session: alice.session, tz: 'UTC', app_id: app, type: 1, id, fields: 'Probability' });
    expect(res.envelope.data).toEqual([{ Probability: '0.75' }]);
    expect((await patch(alice, 1.5)).envelope).toEqual({ status: 1, data: "Invalid parameter 'probability': must be between 0 and 1" });
    expect((await patch(alice, 'high')).envelope).toEqual({ status: 1, data: "Invalid parameter 'probability': must be a number" });
    expect((await patch(bob, 0.5)).envelope.data).toBe(`App record of app '${app}' with id ${id} not found`);
    expect((await patch(alice, 0.5, 'elsewhere')).envelope.data).toBe(`App record of app 'elsewhere' with id ${id} not found`);
  });

  it('keeps consumers to their own records while administrators see everyone', async () => {
    const app = `iso-${alice.id}`;
    const id = (await send('POST', 'app.php', { session: alice.session, app_id: app })).envelope.data as number;
    const list = (user: TestUser) => get('app.php', { session: user.session, tz: 'UTC', app_id: app, fields: 'Id,User_Id', filters: '' });
    expect((await list(bob)).envelope).toEqual({ status: 0, data: [] });
    expect((await list(admin)).envelope.data).toEqual([{ Id: String(id), User_Id: String(alice.id) }]);
    const byId = await get('app.php', { session: bob.session, tz: 'UTC', app_id: app, type: 1, id, fields: '*' });
    expect(byId.envelope.status).toBe(1);
  });
});

describe('status records (/stat)', () => {
  it('opens, modifies, counts, lists and terminates a record of a job', async () => {
    const { jobId } = await jobOf(alice, { status: 2 });
    const process = { name: 'train', host: 'node-a', pid: 1234 };
    const opened = await ctx.request({
      method: 'POST',
      url: `${CURRENT}/stat.php?${new URLSearchParams({ session: alice.session, tz: 'UTC', ...process, pid: '1234', parameters: 'epochs=10', caller: 'runner', job_id: String(jobId) }).toString()}`,
    });
    expect(opened.envelope.status).toBe(0);
    const id = opened.envelope.data as number;

    const count = await get('stat.php', { session: alice.session, tz: 'UTC', terminate: 0, job_id: jobId, progress_type: 1 });
    expect(count.envelope).toEqual({ status: 0, data: [{ total: '1' }] });

    const patch = (body: Record<string, string | number>, user = alice) => send('PATCH', 'stat.php', { session: user.session, tz: 'UTC', ...process, ...body });
    expect((await patch({ terminate: 0, procedure: 'fit', text: 'epoch 4', advance: 40 })).envelope).toEqual({ status: 0, data: 'success' });
    const listed = await get('stat.php', { session: alice.session, tz: 'Europe/Madrid', terminate: 0, job_id: jobId });
    expect(listed.envelope.data).toEqual([
      expect.objectContaining({
        id: String(id),
        job_id: String(jobId),
        name: 'train',
        host: 'node-a',
        pid: '1234',
        parameters: 'epochs=10',
        caller: 'runner',
        procedure: 'fit',
        text: 'epoch 4',
        advance: '40',
        status: '0',
        terminated: null,
      }),
    ]);

    expect((await patch({ terminate: 0, advance: 140 })).envelope.data).toBe("Invalid parameter 'advance': must be between 0 and 100");
    expect((await patch({ terminate: 7 })).envelope.data).toBe("Invalid parameter 'terminate': must be 0 (modify), 1 (finished), 2 (failed) or 3 (aborted)");
    expect((await patch({ terminate: 0, advance: 50 }, bob)).envelope.data).toBe("Open status record 'train' of host 'node-a' pid 1234 not found");

    expect((await patch({ terminate: 1, text: 'done', advance: 100 })).envelope).toEqual({ status: 0, data: 'success' });
    const closed = await get('stat.php', { session: alice.session, tz: 'UTC', terminate: 1, ...process, status: '1,2' });
    expect(closed.envelope.data).toEqual([expect.objectContaining({ id: String(id), status: '1', text: 'done', advance: '100' })]);
    expect(closed.envelope.data[0].terminated).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect((await get('stat.php', { session: alice.session, tz: 'UTC', terminate: 1, ...process, status: '0' })).envelope.data).toEqual([]);
    expect((await get('stat.php', { session: bob.session, tz: 'UTC', terminate: 1, ...process, status: '1' })).envelope).toEqual({ status: 0, data: [] });
    expect((await get('stat.php', { session: admin.session, tz: 'UTC', terminate: 1, ...process, status: '1' })).envelope.data).toHaveLength(1);
    // A terminated record is final.
    expect((await patch({ terminate: 0, text: 'again' })).envelope.data).toBe("Open status record 'train' of host 'node-a' pid 1234 not found");
  });

  it('answers clear errors and keeps consumers to their own records', async () => {
    const { jobId } = await jobOf(alice);
    const q = { session: alice.session, tz: 'UTC' };
    expect((await get('stat.php', { ...q, terminate: 0 })).envelope.data).toBe("Missing required parameter 'job_id'");
    expect((await get('stat.php', { ...q, job_id: jobId, progress_type: 3 })).envelope.data).toBe("Invalid parameter 'progress_type': must be 1 (count) or 2 (results)");
    expect((await get('stat.php', { ...q, terminate: 1, host: 'h', name: 'n', status: '0' })).envelope.data).toBe("Missing required parameter 'pid'");
    expect((await get('stat.php', { ...q, terminate: 1, pid: 1, name: 'n', status: '0' })).envelope.data).toBe("Missing required parameter 'host'");
    expect((await get('stat.php', { ...q, terminate: 1, pid: 1, host: 'h', status: '0' })).envelope.data).toBe("Missing required parameter 'name'");
    expect((await get('stat.php', { ...q, terminate: 1, pid: 1, host: 'h', name: 'n' })).envelope.data).toBe("Missing required parameter 'status'");
    expect((await get('stat.php', { ...q, terminate: 1, pid: 1, host: 'h', name: 'n', status: '0;drop' })).envelope.data).toMatch(/^Invalid parameter 'status': must be status codes/);
    expect((await get('stat.php', { ...q, terminate: 1, pid: 1, host: 'h', name: 'n', status: '0,9' })).envelope.data).toMatch(/^Invalid parameter 'status': 9 is not a status code/);
    expect((await get('stat.php', { session: bob.session, tz: 'UTC', job_id: jobId })).envelope.data).toBe(`Job ${jobId} not found`);

    const post = (body: Record<string, string | number>, user = alice) => send('POST', 'stat.php', { session: user.session, tz: 'UTC', ...body });
    expect((await post({ host: 'h', pid: 1, parameters: 'p' })).envelope.data).toBe("Missing required parameter 'name'");
    expect((await post({ name: 'n', host: 'h', parameters: '' })).envelope.data).toBe("Missing required parameter 'pid'");
    // Empty parameters read as none.
    const bare = await post({ name: 'bare', host: 'h', pid: 1, parameters: '' });
    expect(bare.envelope.status).toBe(0);
    expect(await ctx.services.stats.get(bare.envelope.data as number)).toMatchObject({ parameters: '', user_id: alice.id, job_id: null });
    expect((await post({ name: 'n', host: 'h', pid: 1, parameters: '', job_id: jobId }, bob)).envelope.data).toBe(`Job ${jobId} not found`);
    // An administrator's record of a consumer's job is the consumer's to read.
    expect((await post({ name: 'ext', host: 'h', pid: 1, parameters: '', job_id: jobId }, admin)).envelope.status).toBe(0);
    expect((await get('stat.php', { ...q, job_id: jobId })).envelope.data).toEqual([expect.objectContaining({ name: 'ext' })]);
  });

  it('serves the engine runner by record id', async () => {
    const { jobId } = await jobOf(alice, { status: 2 });
    const id = await ctx.services.stats.open({ name: 'job', host: 'w1', pid: 77, parameters: '{}', jobId, userId: alice.id });
    expect(await ctx.services.stats.update(id, { advance: 55.5, procedure: 'fit' })).toBe(true);
    expect(await ctx.services.stats.terminate(id, 3, { text: 'aborted by user' })).toBe(true);
    expect(await ctx.services.stats.update(id, { advance: 60 })).toBe(false);
    expect(await ctx.services.stats.get(id)).toMatchObject({ advance: 55.5, status: 3, text: 'aborted by user', procedure: 'fit' });
  });
});

describe('network weights (/netw)', () => {
  it('stores the query text verbatim as data, never executing it, and confirms, deletes', async () => {
    const { trainingId } = await jobOf(alice);
    const before = await countUsers();
    const query = "drop table users; select 1; -- ünïcode";
    const posted = await send('POST', 'netw.php', { session: alice.session, tz: 'UTC', query, training_id: trainingId });
    expect(posted.envelope.status).toBe(0);
    expect(await countUsers()).toBe(before);
    const stored = await ctx.database.db.selectFrom('network_weights').select(['content', 'kind']).where('id', '=', posted.envelope.data).executeTakeFirstOrThrow();
    expect(stored).toEqual({ content: query, kind: 'query' });

    const confirmed = await get('netw.php', { session: alice.session, tz: 'UTC', training_id: trainingId });
    expect(confirmed.envelope.status).toBe(0);
    expect(confirmed.envelope.data).toMatch(
      new RegExp(`^Network for training ${trainingId} stored \\(${Buffer.byteLength(query)} bytes, \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}\\)$`),
    );
    expect((await get('netw.php', { session: bob.session, tz: 'UTC', training_id: trainingId })).envelope.data).toBe(`Training ${trainingId} not found`);
    expect((await send('DELETE', 'netw.php', { session: bob.session, tz: 'UTC', training_id: trainingId })).envelope.data).toBe(`Training ${trainingId} not found`);

    expect((await send('DELETE', 'netw.php', { session: alice.session, tz: 'UTC', training_id: trainingId })).envelope).toEqual({ status: 0, data: 'success' });
    expect((await get('netw.php', { session: alice.session, tz: 'UTC', training_id: trainingId })).envelope).toEqual({ status: 1, data: `No network stored for training ${trainingId}` });
    expect((await send('DELETE', 'netw.php', { session: alice.session, tz: 'UTC', training_id: trainingId })).envelope).toEqual({
      status: 1,
      data: `No network stored for training ${trainingId}`,
    });
    // The database still works as before: the users table is there and logins succeed.
    expect(await ctx.login(alice.email, alice.password)).toBeTruthy();
  });

  it("attaches weights without training_id to the caller's running job, and answers clear errors", async () => {
    const q = { session: bob.session, tz: 'UTC' };
    expect((await send('POST', 'netw.php', { ...q, query: 'x' })).envelope).toEqual({ status: 1, data: "Missing required parameter 'training_id'" });
    const { trainingId } = await jobOf(bob, { status: 2 });
    expect((await send('POST', 'netw.php', { ...q, query: 'weights' })).envelope.status).toBe(0);
    expect((await get('netw.php', { ...q, training_id: trainingId })).envelope.data).toMatch(/^Network for training \d+ stored \(7 bytes, /);
    expect((await send('POST', 'netw.php', { ...q, training_id: trainingId })).envelope.data).toBe("Missing required parameter 'query'");
    expect((await get('netw.php', { ...q })).envelope.data).toBe("Missing required parameter 'training_id'");
    expect((await get('netw.php', { ...q, training_id: 'abc' })).envelope.data).toBe("Invalid parameter 'training_id': must be a positive integer id");
    const { trainingId: alices } = await jobOf(alice);
    expect((await send('POST', 'netw.php', { ...q, query: 'x', training_id: alices })).envelope.data).toBe(`Training ${alices} not found`);
  });
});

describe('forecasts with a stored network (older POST /forecasts.php)', () => {
  const header = ['x1', 'x2', 'Note', 'y'];
  let model: TrainedModel;
  let job: { jobId: number; trainingId: number };

  beforeAll(async () => {
    // y = 3*x1 - 2*x2 + 5 on a tiny grid, trained in a real worker thread.
    const rows: string[][] = [];
    for (let i = 0; i < 40; i++) {
      const x1 = (i % 8) + 1;
      const x2 = Math.floor(i / 8) + 1;
      rows.push([String(x1), String(x2), `n${i}`, String(3 * x1 - 2 * x2 + 5)]);
    }
    const pool = createTrainingPool({ maxThreads: 1 });
    try {
      const result = await pool.train({
        header,
        columns: [
          { name: 'x1', role: 'input', kind: 'numeric' },
          { name: 'x2', role: 'input', kind: 'numeric' },
          { name: 'Note', role: 'ignore', kind: 'categorical' },
          { name: 'y', role: 'output', kind: 'numeric' },
        ],
        rows,
        params: { seed: 7, epochs: 200, layersRequested: 1 },
      });
      model = result.model;
    } finally {
      await pool.close();
    }
    job = await jobOf(alice, { status: 3 });
    await ctx.services.networks.saveModel(job.trainingId, alice.id, model);
  });

  it('reloads the model from the database identical, with identical predictions, also after a restart', async () => {
    // A freshly built service over the same database stands for a restarted process.
    const restarted = createNetworksService({ networks: createNetworksRepository(ctx.database.db), lookups: { job: async () => undefined, training: async () => undefined }, clock: systemClock });
    const reloaded = await restarted.loadModel(job.trainingId);
    expect(reloaded).toEqual(JSON.parse(JSON.stringify(model)));
    const probe = [
      { x1: '2', x2: '3' },
      { x1: '7.5', x2: '1' },
      { x1: '4', x2: '' },
    ];
    expect(predict(reloaded!, ['x1', 'x2', 'y'], probe)).toEqual(predict(model, ['x1', 'x2', 'y'], probe));
    // Saving again replaces the model instead of piling up copies.
    await ctx.services.networks.saveModel(job.trainingId, alice.id, model);
    const models = await ctx.database.db.selectFrom('network_weights').select('id').where('training_id', '=', job.trainingId).where('kind', '=', 'model').execute();
    expect(models).toHaveLength(1);
    expect(await restarted.loadModel(999_999)).toBeUndefined();
  });

  /** The job's latest output record, read the way a user does. */
  const outputOf = async (jobId: number) => {
    const res = await get('data.php', { session: alice.session, tz: 'UTC', type: 0, job_id: jobId, output: 1 });
    expect(res.envelope.status).toBe(0);
    return res.envelope.data as Record<string, string>[];
  };

  it('predicts the posted row with the job network and keeps it as a new output record of the job', async () => {
    const res = await send('POST', 'forecasts.php', { session: alice.session, job_id: job.jobId, x1: '6', x2: '2', Note: 'hello', y: '' }, OLDER);
    expect(res.envelope).toEqual({ status: 0, data: 'success' });
    const expected = predict(model, ['x1', 'x2', 'Note', 'y'], [{ x1: '6', x2: '2', Note: 'hello' }])[0]!;
    expect(await outputOf(job.jobId)).toEqual([expected]);
    expect(Object.keys(expected)).toEqual(['x1', 'x2', 'Note', 'y']);
    // The network learned the relation: 3*6 - 2*2 + 5 = 19.
    expect(Math.abs(Number(expected.y) - 19)).toBeLessThan(3);

    // Without job_id: the caller's newest finished job with a network.
    const implicit = await send('POST', 'forecasts.php', { session: alice.session, x1: '1', x2: '1' }, OLDER);
    expect(implicit.envelope).toEqual({ status: 0, data: 'success' });
    expect(await outputOf(job.jobId)).toEqual(predict(model, ['x1', 'x2', 'y'], [{ x1: '1', x2: '1' }]));
    const byTraining = await send('POST', 'forecasts.php', { session: alice.session, training_id: job.trainingId, x1: '3' }, OLDER);
    expect(byTraining.envelope).toEqual({ status: 0, data: 'success' });
  });

  it('refuses what it cannot predict, with clear errors', async () => {
    const post = (body: Record<string, string | number>, user = alice) => send('POST', 'forecasts.php', { session: user.session, ...body }, OLDER);
    expect((await post({ job_id: job.jobId })).envelope).toEqual({ status: 1, data: "Missing required parameter '{column-name}'" });
    expect((await post({ job_id: job.jobId, x1: '', x2: ' ' })).envelope).toEqual({ status: 1, data: "Missing required parameter '{column-name}'" });
    expect((await post({ job_id: job.jobId, Other: '3' })).envelope.data).toBe("Invalid parameter '{column-name}': none of the posted columns is an input of the network (inputs: x1, x2)");
    expect((await post({ job_id: job.jobId, x1: '3' }, bob)).envelope.data).toBe(`Job ${job.jobId} not found`);
    expect((await post({ x1: '3' }, bob)).envelope.data).toBe('You have no finished job with a trained network to forecast with');
    expect((await post({ job_id: job.jobId, training_id: job.trainingId + 1000, x1: '3' })).envelope.data).toBe(
      `Invalid parameter 'training_id': job ${job.jobId} runs training ${job.trainingId}, not ${job.trainingId + 1000}`,
    );
    const untrained = await jobOf(alice, { status: 3 });
    expect((await post({ job_id: untrained.jobId, x1: '3' })).envelope.data).toBe(`Training ${untrained.trainingId} has no trained network yet`);
    expect((await post({ training_id: untrained.trainingId, x1: '3' })).envelope.data).toBe(`Training ${untrained.trainingId} has no finished job with a trained network`);
    const noTz = await ctx.request({ method: 'POST', url: `${OLDER}/forecasts.php`, ...form({ session: alice.session, x1: '3' }) });
    expect(noTz.envelope.data).toBe("Missing required parameter 'tz'");
    // An administrator may forecast with any job's network.
    expect((await post({ job_id: job.jobId, x1: '3' }, admin)).envelope).toEqual({ status: 0, data: 'success' });
  });
});

describe('wiring', () => {
  it('exposes paramsForJob through the service the runner uses, and refuses unknown jobs', async () => {
    const service = createAppRecordsService({
      records: createAppRecordsRepository(ctx.database.db),
      lookups: { job: async () => undefined, training: async () => undefined },
      clock: systemClock,
    });
    await expect(service.paramsForJob(123456)).rejects.toThrow('Job 123456 not found');
  });
});
