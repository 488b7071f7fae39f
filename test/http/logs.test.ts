import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT, OLDER, createTestContext, form, type TestContext, type TestUser } from '../support/helper.js';

let ctx: TestContext;
let admin: TestUser;
beforeAll(async () => {
  ctx = await createTestContext();
  admin = await ctx.createUser({ role: 'admin' });
});
afterAll(async () => {
  await ctx?.close();
});

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const getLogs = (user: TestUser, query: string) => ctx.request({ method: 'GET', url: `${CURRENT}/logs.php?session=${user.session}&tz=UTC&${query}` });
const postLog = (user: TestUser, fields: Record<string, string | number>) =>
  ctx.request({ method: 'POST', url: `${CURRENT}/logs.php?session=${user.session}&tz=UTC`, ...form(fields) });
const getConsumptions = (user: TestUser, query = '') =>
  ctx.request({ method: 'GET', url: `${CURRENT}/consumptions.php?session=${user.session}&${query}` });

async function tableCounts() {
  const n = async (table: 'logs' | 'consumptions' | 'users' | 'subscriptions') =>
    (await ctx.database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
  return { logs: await n('logs'), consumptions: await n('consumptions'), users: await n('users'), subscriptions: await n('subscriptions') };
}

describe('logs', () => {
  it('refuses GET /logs to a consumer with the error envelope', async () => {
    const user = await ctx.createUser();
    const res = await getLogs(user, '');
    expect(res.statusCode).toBe(200);
    expect(res.envelope).toEqual({ status: 1, data: 'Forbidden: this operation requires an administrator' });
  });

  it('writes a log entry for any signed-in user and shows it to administrators', async () => {
    const user = await ctx.createUser();
    const res = await postLog(user, { message: 'trainer started', PID: 4242, host: 'worker-7', log_type: 3, caller: 'trainer.main' });
    expect(res.envelope.status).toBe(0);
    const id = res.envelope.data;
    expect(Number.isInteger(id)).toBe(true);

    const read = await getLogs(admin, 'host=worker-7');
    expect(read.envelope).toEqual({
      status: 0,
      data: [{ id, host: 'worker-7', pid: 4242, procedure: 'trainer.main', type: 3, date: expect.stringMatching(TIMESTAMP), text: 'trainer started' }],
    });
    const defaults = await postLog(user, { message: 'plain', PID: 1 });
    const [entry] = (await getLogs(admin, `pid=1&search=plain`)).envelope.data;
    expect(entry).toMatchObject({ id: defaults.envelope.data, host: '', procedure: '', type: 2 });
  });

  it('explains every bad POST /logs', async () => {
    const user = await ctx.createUser();
    const cases: [Record<string, string | number>, string][] = [
      [{ PID: 1 }, "Missing required parameter 'message'"],
      [{ message: 'x' }, "Missing required parameter 'PID'"],
      [{ message: 'x', PID: 'abc' }, "Invalid parameter 'PID': must be an integer"],
      [{ message: 'x', PID: 1, log_type: 7 }, "Invalid parameter 'log_type': must be a log type from 0 (extra verbose) to 4 (error)"],
    ];
    for (const [fields, message] of cases) expect((await postLog(user, fields)).envelope).toEqual({ status: 1, data: message });
    const noTz = await ctx.request({ method: 'POST', url: `${CURRENT}/logs.php?session=${user.session}`, ...form({ message: 'x', PID: 1 }) });
    expect(noTz.envelope).toEqual({ status: 1, data: "Missing required parameter 'tz'" });
  });

  it('filters by host, procedure prefix, pid, type, search, dates and limit', async () => {
    const user = await ctx.createUser();
    const host = `filter-host-${user.id}`;
    for (let i = 0; i < 5; i++) {
      await postLog(user, { message: `step ${i} of job`, PID: 100 + (i % 2), host, log_type: i % 5, caller: i < 3 ? 'jobs.run' : 'data.ingest' });
    }
    const texts = async (query: string) => (await getLogs(admin, `host=${host}&${query}`)).envelope.data.map((l: { text: string }) => l.text);
    expect(await texts('')).toEqual(['step 4 of job', 'step 3 of job', 'step 2 of job', 'step 1 of job', 'step 0 of job']);
    expect(await texts('procedure=jobs')).toEqual(['step 2 of job', 'step 1 of job', 'step 0 of job']);
    expect(await texts('pid=101')).toEqual(['step 3 of job', 'step 1 of job']);
    expect(await texts('type=4')).toEqual(['step 4 of job']);
    expect(await texts('search=STEP%203')).toEqual(['step 3 of job']);
    expect(await texts('limit=2')).toEqual(['step 4 of job', 'step 3 of job']);
    expect(await texts('date_from=2000-01-01&date_to=2000-12-31')).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await texts(`date_from=${today}&date_to=${today}`)).toHaveLength(5);
    expect(await texts('filters=' + encodeURIComponent("type >= 3 AND procedure LIKE 'data%'"))).toEqual(['step 4 of job', 'step 3 of job']);

    expect((await getLogs(admin, 'limit=5000')).envelope).toEqual({ status: 1, data: "Invalid parameter 'limit': must be between 0 and 1000" });
    expect((await getLogs(admin, 'date_from=yesterday')).envelope.data).toContain("Invalid parameter 'date_from'");
    expect((await getLogs(admin, 'date_to=2024-02-30')).envelope).toEqual({ status: 1, data: "Invalid parameter 'date_to': '2024-02-30' is not a valid date" });
    expect((await getLogs(admin, 'type=9')).envelope.data).toContain("Invalid parameter 'type'");
    const noTz = await ctx.request({ method: 'GET', url: `${CURRENT}/logs.php?session=${admin.session}` });
    expect(noTz.envelope).toEqual({ status: 1, data: "Missing required parameter 'tz'" });
  });

  it("stores the service's own events (a failed login) with host, pid and request id", async () => {
    const user = await ctx.createUser();
    await ctx.request({
      method: 'POST',
      url: `${CURRENT}/sessions.php`,
      headers: { 'x-request-id': 'req-failed-login-1' },
      payload: { email: user.email, password: 'wrong-password' },
    });
    const res = await getLogs(admin, 'procedure=sessions.login&search=req-failed-login-1');
    expect(res.envelope.data).toEqual([
      {
        id: expect.any(Number),
        host: os.hostname(),
        pid: process.pid,
        procedure: 'sessions.login',
        type: 3,
        date: expect.stringMatching(TIMESTAMP),
        text: expect.stringMatching(new RegExp(`^Failed login for ${user.email.replace(/\./g, '\\.')}.* \\[request req-failed-login-1\\]$`)),
      },
    ]);
    expect(JSON.stringify(res.envelope.data)).not.toContain('wrong-password');
  });

  it('exists only in the current version', async () => {
    const res = await ctx.request({ method: 'GET', url: `${OLDER}/logs.php?session=${admin.session}&tz=UTC` });
    expect(res.statusCode).toBe(404);
    expect(res.envelope.status).toBe(1);
  });
});

describe('consumptions', () => {
  let a: TestUser;
  let b: TestUser;
  beforeAll(async () => {
    a = await ctx.createUser({ name: 'Alba' });
    b = await ctx.createUser({ name: 'Bruno' });
    const record = (userId: number, appName: string, date: string, ram: number) =>
      ctx.services.consumptions.record({
        userId,
        jobId: 7,
        trainingId: 3,
        appName,
        host: 'node-1',
        pid: 900,
        ramMb: ram,
        cpuSeconds: 12.5,
        diskMb: 0.75,
        date: new Date(date),
      });
    await record(a.id, 'forecast', '2024-01-10T10:00:00Z', 128);
    await record(a.id, 'forecast', '2024-02-10T23:30:00Z', 256);
    await record(b.id, 'forecast', '2024-01-15T08:00:00Z', 512);
  });

  it("gives a consumer its own records and an administrator everyone's", async () => {
    const own = await getConsumptions(a, 'tz=Europe/Madrid');
    expect(own.envelope.status).toBe(0);
    expect(own.envelope.data).toHaveLength(2);
    expect(own.envelope.data[0]).toEqual({
      id: expect.any(Number),
      user_id: a.id,
      user_name: 'Alba Tester',
      date: '2024-01-10 11:00:00',
      app_name: 'forecast',
      training_id: 3,
      job_id: 7,
      host: 'node-1',
      pid: 900,
      ram: 128,
      cpu: 12.5,
      disk: 0.75,
      date_invoiced: null,
      kind: 'training',
      client_id: null,
      usecase_id: null,
      chat_id: null,
      model: null,
      prompt_tokens: null,
      completion_tokens: null,
    });
    const all = await getConsumptions(admin);
    const users = new Set(all.envelope.data.map((c: { user_id: number }) => c.user_id));
    expect(users).toEqual(new Set([a.id, b.id]));
    expect(all.envelope.data.find((c: { user_id: number }) => c.user_id === b.id).date).toBe('2024-01-15 08:00:00');
  });

  it('filters by dates in the caller tz, app, search and filters', async () => {
    const rams = async (user: TestUser, query: string) =>
      (await getConsumptions(user, query)).envelope.data.map((c: { ram: number }) => c.ram);
    expect(await rams(a, 'date_from=2024-02-01')).toEqual([256]);
    expect(await rams(a, 'date_to=2024-02-10')).toEqual([128, 256]);
    // 23:30 UTC on Feb 10 is already Feb 11 in Madrid.
    expect(await rams(a, 'tz=Europe/Madrid&date_to=2024-02-10')).toEqual([128]);
    expect(await rams(a, 'app=forecast')).toEqual([128, 256]);
    expect(await rams(a, 'app=weather')).toEqual([]);
    expect(await rams(admin, 'search=bruno')).toEqual([512]);
    expect(await rams(a, 'search=bruno')).toEqual([]);
    expect(await rams(a, `filters=${encodeURIComponent('ram > 200')}`)).toEqual([256]);
    expect((await getConsumptions(a, 'invoiced=2')).envelope.data).toBe("Invalid parameter 'invoiced': must be 0 or 1");
    expect((await getConsumptions(a, 'filters=secret_column%3D1')).envelope).toEqual({
      status: 1,
      data: expect.stringContaining("Invalid parameter 'filters': unknown column"),
    });
  });

  it("keeps a hostile filter or search inside the caller's own rows and leaves every table intact", async () => {
    const before = await tableCounts();
    const widen = await getConsumptions(a, `filters=${encodeURIComponent('user_id = 0 OR ram >= 0')}`);
    expect(widen.envelope.status).toBe(0);
    expect(widen.envelope.data.map((c: { user_id: number }) => c.user_id)).toEqual([a.id, a.id]);

    const refused = [
      "1=1; DROP TABLE consumptions; --",
      "user_id = 1 OR 1=1",
      "ram > 0 UNION SELECT password_hash FROM users",
      "app_name = '' OR (SELECT count(*) FROM users) > 0",
      "ram > 0 -- comment",
      "pg_sleep(5) IS NULL",
      "ram = disk",
    ];
    for (const text of refused) {
      const res = await getConsumptions(a, `filters=${encodeURIComponent(text)}`);
      expect(res.envelope.status, text).toBe(1);
      expect(res.envelope.data, text).toMatch(/^Invalid parameter 'filters': /);
    }
    for (const search of ["' OR '1'='1", "'; DELETE FROM consumptions; --", '%']) {
      const res = await getConsumptions(a, `search=${encodeURIComponent(search)}`);
      expect(res.envelope, search).toEqual({ status: 0, data: [] });
    }
    expect(await tableCounts()).toEqual(before);
  });

  it('lets only administrators mark records invoiced, by date (inclusive day) or by ids', async () => {
    const patch = (user: TestUser, query: string) =>
      ctx.request({ method: 'PATCH', url: `${CURRENT}/consumptions.php?session=${user.session}&${query}` });
    expect((await patch(a, 'until=2030-01-01')).envelope).toEqual({ status: 1, data: 'Forbidden: this operation requires an administrator' });
    expect((await getConsumptions(a, 'invoiced=1')).envelope.data).toEqual([]);

    expect((await patch(admin, '')).envelope).toEqual({ status: 1, data: "Missing required parameter 'until' or 'ids'" });
    expect((await patch(admin, 'until=2024-01-15&ids=1')).envelope).toEqual({ status: 1, data: "Invalid parameter 'ids': give either 'until' or 'ids', not both" });
    expect((await patch(admin, 'until=soon')).envelope.data).toContain("Invalid parameter 'until'");

    expect((await patch(admin, 'until=2024-01-15')).envelope).toEqual({ status: 0, data: 2 });
    const invoiced = (await getConsumptions(admin, 'invoiced=1')).envelope.data;
    expect(invoiced.map((c: { ram: number }) => c.ram)).toEqual([128, 512]);
    expect(invoiced[0].date_invoiced).toMatch(TIMESTAMP);
    expect((await patch(admin, 'until=2024-01-15')).envelope).toEqual({ status: 0, data: 0 });

    const open = (await getConsumptions(a, 'invoiced=0')).envelope.data;
    expect(open.map((c: { ram: number }) => c.ram)).toEqual([256]);
    expect((await patch(admin, `ids=${open[0].id},999999`)).envelope).toEqual({ status: 0, data: 1 });
    expect((await getConsumptions(a, 'invoiced=0')).envelope.data).toEqual([]);
  });

  it('records a run through the service and refuses negative amounts', async () => {
    const id = await ctx.services.consumptions.record({ userId: a.id, appName: 'forecast', host: 'h', pid: 1, ramMb: 1, cpuSeconds: 0, diskMb: 0 });
    expect(Number.isInteger(id)).toBe(true);
    await expect(
      ctx.services.consumptions.record({ userId: a.id, appName: 'forecast', host: 'h', pid: 1, ramMb: -1, cpuSeconds: 0, diskMb: 0 }),
    ).rejects.toThrow("Invalid parameter 'ram'");
  });
});
