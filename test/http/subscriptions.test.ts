import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT, OLDER, createTestContext, form, type TestContext, type TestUser } from '../support/helper.js';

let ctx: TestContext;
let admin: TestUser;
beforeAll(async () => {
  ctx = await createTestContext();
  admin = await ctx.createUser({ role: 'admin', name: 'Root' });
});
afterAll(async () => {
  await ctx?.close();
});

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

async function periods(userId: number) {
  return ctx.database.db
    .selectFrom('subscriptions')
    .select(['id', 'plan_id', 'unsubscribed_at'])
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
}

const subscribe = (user: TestUser, app = 'forecast') =>
  ctx.request({ method: 'POST', url: `${CURRENT}/subscriptions.php?session=${user.session}`, ...form({ app }) });
const unsubscribe = (user: TestUser, query: string) =>
  ctx.request({ method: 'DELETE', url: `${CURRENT}/subscriptions.php?session=${user.session}&${query}` });
const patch = (user: TestUser, query: string) =>
  ctx.request({ method: 'PATCH', url: `${CURRENT}/subscriptions.php?session=${user.session}&${query}` });
const list = (user: TestUser, query = 'tz=UTC', base = CURRENT) =>
  ctx.request({ method: 'GET', url: `${base}/subscriptions.php?session=${user.session}&${query}` });

describe('GET /applications', () => {
  it('lists the seeded application with its plan (current) or only its name (older)', async () => {
    const user = await ctx.createUser();
    const current = await ctx.request({ method: 'GET', url: `${CURRENT}/applications.php?session=${user.session}` });
    expect(current.envelope).toEqual({ status: 0, data: [{ name: 'forecast', planId: 'basic' }] });
    const older = await ctx.request({ method: 'GET', url: `${OLDER}/applications.php?session=${user.session}` });
    expect(older.envelope).toEqual({ status: 0, data: [{ name: 'forecast' }] });
  });

  it('needs a valid session', async () => {
    expect((await ctx.request({ method: 'GET', url: `${CURRENT}/applications.php` })).envelope).toEqual({
      status: 1,
      data: "Missing required parameter 'session'",
    });
    expect((await ctx.request({ method: 'GET', url: `${OLDER}/applications.php?session=nope` })).envelope).toEqual({
      status: 1,
      data: 'Invalid or expired session',
    });
  });
});

describe('subscriptions (current version)', () => {
  it('subscribes, answers the id, and lists the subscription with its user in the caller tz', async () => {
    const user = await ctx.createUser({ name: 'Carla' });
    const res = await subscribe(user);
    expect(res.statusCode).toBe(200);
    expect(res.envelope.status).toBe(0);
    expect(Number.isInteger(res.envelope.data)).toBe(true);

    const utc = await list(user, 'tz=UTC');
    expect(utc.envelope.status).toBe(0);
    expect(utc.envelope.data).toEqual([
      {
        name: 'forecast',
        status: 'subscribed',
        subscription_date: expect.stringMatching(TIMESTAMP),
        user: { id: user.id, name: 'Carla Tester' },
        id: res.envelope.data,
        planId: 'basic',
      },
    ]);
    const tokyo = await list(user, 'tz=Asia/Tokyo');
    const at = (text: string, zone: string) => DateTime.fromFormat(text, 'yyyy-MM-dd HH:mm:ss', { zone });
    const local = tokyo.envelope.data[0].subscription_date as string;
    expect(local).not.toBe(utc.envelope.data[0].subscription_date);
    expect(at(local, 'Asia/Tokyo').toMillis()).toBe(at(utc.envelope.data[0].subscription_date, 'UTC').toMillis());
  });

  it('refuses a missing or invalid tz, an unknown application, a missing app and a double subscription', async () => {
    const user = await ctx.createUser();
    expect((await list(user, '')).envelope).toEqual({ status: 1, data: "Missing required parameter 'tz'" });
    expect((await list(user, 'tz=Mars/Olympus')).envelope.data).toContain("Invalid parameter 'tz'");
    expect((await list(user, 'tz=UTC&status=gone')).envelope.data).toContain("Invalid parameter 'status'");
    const unknown = await subscribe(user, 'weather');
    expect(unknown.envelope).toEqual({ status: 1, data: "Invalid parameter 'app': 'weather' is not an application (see GET /applications)" });
    const missing = await ctx.request({ method: 'POST', url: `${CURRENT}/subscriptions.php?session=${user.session}`, ...form({}) });
    expect(missing.envelope).toEqual({ status: 1, data: "Missing required parameter 'app'" });
    expect((await subscribe(user)).envelope.status).toBe(0);
    expect((await subscribe(user)).envelope).toEqual({ status: 1, data: "You are already subscribed to 'forecast'" });
    expect(await periods(user.id)).toHaveLength(1);
  });

  it('unsubscribes, shows the unsubscription date, and keeps history when re-subscribing', async () => {
    const user = await ctx.createUser();
    const first = (await subscribe(user)).envelope.data as number;
    expect((await unsubscribe(user, 'app=forecast')).envelope).toEqual({ status: 0, data: 'success' });
    const after = await list(user);
    expect(after.envelope.data).toEqual([
      expect.objectContaining({ name: 'forecast', status: 'unsubscribed', unsubscription_date: expect.stringMatching(TIMESTAMP) }),
    ]);
    expect((await unsubscribe(user, 'app=forecast')).envelope).toEqual({ status: 1, data: "You are not subscribed to 'forecast'" });

    const second = (await subscribe(user)).envelope.data as number;
    expect(second).not.toBe(first);
    const again = await list(user);
    expect(again.envelope.data).toHaveLength(1);
    expect(again.envelope.data[0]).toMatchObject({ id: second, status: 'subscribed' });
    expect(again.envelope.data[0]).not.toHaveProperty('unsubscription_date');
    const history = await periods(user.id);
    expect(history.map((p) => p.id)).toEqual([first, second]);
    expect(history[0]!.unsubscribed_at).toBeInstanceOf(Date);
    expect(history[1]!.unsubscribed_at).toBeNull();
  });

  it('filters by status and by a partial application name', async () => {
    const user = await ctx.createUser();
    await subscribe(user);
    expect((await list(user, 'tz=UTC&status=subscribed')).envelope.data).toHaveLength(1);
    expect((await list(user, 'tz=UTC&status=unsubscribed')).envelope.data).toEqual([]);
    expect((await list(user, 'tz=UTC&search=CAST')).envelope.data).toHaveLength(1);
    expect((await list(user, 'tz=UTC&search=weather')).envelope.data).toEqual([]);
  });

  it("gives a consumer only its own subscriptions and an administrator everyone's", async () => {
    const a = await ctx.createUser();
    const b = await ctx.createUser();
    await subscribe(a);
    await subscribe(b);
    const own = await list(a);
    expect(own.envelope.data.map((s: { user: { id: number } }) => s.user.id)).toEqual([a.id]);
    const all = await list(admin);
    const ids = all.envelope.data.map((s: { user: { id: number } }) => s.user.id);
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
  });

  it('lets an administrator unsubscribe a named user, and requires the user', async () => {
    const user = await ctx.createUser();
    await subscribe(user);
    expect((await unsubscribe(admin, 'app=forecast')).envelope).toEqual({ status: 1, data: "Missing required parameter 'user'" });
    expect((await unsubscribe(admin, 'app=forecast&user=999999')).envelope).toEqual({ status: 1, data: 'User 999999 not found' });
    expect((await unsubscribe(admin, `app=forecast&user=${user.id}`)).envelope).toEqual({ status: 0, data: 'success' });
    expect((await periods(user.id))[0]!.unsubscribed_at).toBeInstanceOf(Date);
    expect((await unsubscribe(admin, `app=forecast&user=${user.id}`)).envelope).toEqual({
      status: 1,
      data: `User ${user.id} is not subscribed to 'forecast'`,
    });
  });

  it("refuses a consumer unsubscribing or patching someone else's subscription, changing nothing", async () => {
    const a = await ctx.createUser();
    const b = await ctx.createUser();
    await subscribe(b);
    const before = await periods(b.id);

    const del = await unsubscribe(a, `app=forecast&user=${b.id}`);
    expect(del.statusCode).toBe(200);
    expect(del.envelope).toEqual({ status: 1, data: "Forbidden: only an administrator can change another user's subscription" });
    const pat = await patch(a, `user=${b.id}&params=${encodeURIComponent('app=forecast,plan=premium')}`);
    expect(pat.envelope).toEqual({ status: 1, data: "Forbidden: only an administrator can change another user's subscription" });

    expect(await periods(b.id)).toEqual(before);
    // Naming oneself is allowed.
    await subscribe(a);
    expect((await unsubscribe(a, `app=forecast&user=${a.id}`)).envelope.status).toBe(0);
  });

  it('patches the plan with key=value or JSON params and answers the subscription id', async () => {
    const user = await ctx.createUser();
    const id = (await subscribe(user)).envelope.data as number;
    const res = await patch(user, `params=${encodeURIComponent('app=forecast,plan=premium')}`);
    expect(res.envelope).toEqual({ status: 0, data: id });
    expect((await list(user)).envelope.data[0].planId).toBe('premium');

    const json = await ctx.request({
      method: 'PATCH',
      url: `${CURRENT}/subscriptions.php?session=${user.session}`,
      ...form({ params: JSON.stringify({ app: 'forecast', plan: 'standard' }) }),
    });
    expect(json.envelope).toEqual({ status: 0, data: id });
    expect((await periods(user.id))[0]!.plan_id).toBe('standard');

    const byAdmin = await patch(admin, `user=${user.id}&app=forecast&params=plan=basic`);
    expect(byAdmin.envelope).toEqual({ status: 0, data: id });
    expect((await periods(user.id))[0]!.plan_id).toBe('basic');
  });

  it('explains every bad PATCH and changes nothing', async () => {
    const user = await ctx.createUser();
    await subscribe(user);
    const cases: [string, string][] = [
      ['', "Missing required parameter 'params'"],
      ['params=plan=gold&app=forecast', "Invalid parameter 'params': plan 'gold' does not exist (plans: basic, premium, standard)"],
      ['params=color=red', "Invalid parameter 'params': unknown key 'color' (updatable: plan; app names the subscription)"],
      ['params=premium', "Invalid parameter 'params': 'premium' is not a key=value pair (e.g. plan=premium)"],
      ['params=plan=premium', "Invalid parameter 'params': name the application, e.g. 'app=forecast,plan=premium'"],
      ['params=app=forecast', "Invalid parameter 'params': nothing to update (give e.g. 'plan=premium')"],
      [`params=${encodeURIComponent('{"plan":')}`, "Invalid parameter 'params': is not a valid JSON object"],
      ['params=app=weather,plan=premium', "Invalid parameter 'params': 'weather' is not an application (see GET /applications)"],
    ];
    for (const [query, message] of cases) {
      expect((await patch(user, query)).envelope, query).toEqual({ status: 1, data: message });
    }
    expect((await patch(admin, 'params=app=forecast,plan=premium')).envelope).toEqual({ status: 1, data: "Missing required parameter 'user'" });
    await unsubscribe(user, 'app=forecast');
    expect((await patch(user, 'params=app=forecast,plan=premium')).envelope).toEqual({ status: 1, data: "You are not subscribed to 'forecast'" });
    expect((await periods(user.id)).map((p) => p.plan_id)).toEqual(['basic']);
  });

  it('counts subscribed and unsubscribed applications in GET /summaries', async () => {
    const user = await ctx.createUser();
    const summary = async () =>
      (await ctx.request({ method: 'GET', url: `${CURRENT}/summaries.php?session=${user.session}` })).envelope.data.applications;
    expect(await summary()).toEqual({ subscribed: 0, unsubscribed: 1 });
    await subscribe(user);
    expect(await summary()).toEqual({ subscribed: 1, unsubscribed: 0 });
    await unsubscribe(user, 'app=forecast');
    expect(await summary()).toEqual({ subscribed: 0, unsubscribed: 1 });
  });

  it('treats a hostile search as plain text: no other rows, every table intact', async () => {
    const a = await ctx.createUser();
    const b = await ctx.createUser();
    await subscribe(b);
    const count = async (table: 'subscriptions' | 'users' | 'applications') =>
      (await ctx.database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
    const before = [await count('subscriptions'), await count('users'), await count('applications')];
    for (const search of ["' OR '1'='1", "forecast'; DROP TABLE subscriptions; --", '%', '_', "x' UNION SELECT email FROM users --"]) {
      const res = await list(a, `tz=UTC&search=${encodeURIComponent(search)}`);
      expect(res.envelope, search).toEqual({ status: 0, data: [] });
    }
    expect([await count('subscriptions'), await count('users'), await count('applications')]).toEqual(before);
  });
});

describe('subscriptions (older version)', () => {
  it('subscribes answering success, lists without tz and without user object, unsubscribes without user', async () => {
    const user = await ctx.createUser();
    const post = await ctx.request({ method: 'POST', url: `${OLDER}/subscriptions.php?session=${user.session}`, ...form({ app: 'forecast' }) });
    expect(post.envelope).toEqual({ status: 0, data: 'success' });
    const get = await ctx.request({ method: 'GET', url: `${OLDER}/subscriptions.php?session=${user.session}` });
    expect(get.envelope).toEqual({ status: 0, data: [{ name: 'forecast', status: 'subscribed', subscription_date: expect.stringMatching(TIMESTAMP) }] });
    const del = await ctx.request({ method: 'DELETE', url: `${OLDER}/subscriptions.php?session=${user.session}&app=forecast` });
    expect(del.envelope).toEqual({ status: 0, data: 'success' });
    const after = await ctx.request({ method: 'GET', url: `${OLDER}/subscriptions.php?session=${user.session}&status=unsubscribed` });
    expect(after.envelope.data).toEqual([
      { name: 'forecast', status: 'unsubscribed', subscription_date: expect.stringMatching(TIMESTAMP), unsubscription_date: expect.stringMatching(TIMESTAMP) },
    ]);
    const again = await ctx.request({ method: 'DELETE', url: `${OLDER}/subscriptions.php?session=${user.session}&app=forecast` });
    expect(again.envelope).toEqual({ status: 1, data: "You are not subscribed to 'forecast'" });
  });

  it("gives an administrator only its own rows and ignores a user parameter on DELETE", async () => {
    const user = await ctx.createUser();
    await subscribe(user);
    const get = await ctx.request({ method: 'GET', url: `${OLDER}/subscriptions.php?session=${admin.session}` });
    expect(get.envelope).toEqual({ status: 0, data: [] });
    const del = await ctx.request({ method: 'DELETE', url: `${OLDER}/subscriptions.php?session=${admin.session}&app=forecast&user=${user.id}` });
    expect(del.envelope).toEqual({ status: 1, data: "You are not subscribed to 'forecast'" });
    expect((await periods(user.id))[0]!.unsubscribed_at).toBeNull();
  });

  it('patches like the current version and refuses another user for consumers', async () => {
    const a = await ctx.createUser();
    const b = await ctx.createUser();
    const id = (await subscribe(a)).envelope.data as number;
    await subscribe(b);
    const ok = await ctx.request({ method: 'PATCH', url: `${OLDER}/subscriptions.php?session=${a.session}&params=app=forecast;plan=premium` });
    expect(ok.envelope).toEqual({ status: 0, data: id });
    const other = await ctx.request({ method: 'PATCH', url: `${OLDER}/subscriptions.php?session=${a.session}&user=${b.id}&params=app=forecast;plan=premium` });
    expect(other.envelope.status).toBe(1);
    expect((await periods(b.id))[0]!.plan_id).toBe('basic');
  });
});
