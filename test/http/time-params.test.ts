import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { Settings } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEAK_PATTERN } from '../fuzz/arbitraries.js';
import { factories } from '../support/factories.js';
import { CURRENT, OLDER, createTestContext, form, multipart, type TestContext, type TestUser } from '../support/helper.js';
import { enumerateRoutes, plausibleValue, type AppRoute, type OwnedRows } from '../support/routes.js';

/**
 * `tz` and `period`, which any client may fill with anything. Property-based junk in either, on every
 * operation that takes it (the routes come from the app itself, test/support/routes.ts), is refused in the
 * envelope: HTTP 200, status 1 and a message naming the parameter, never a 500 or a stack trace. Then the
 * answers at month ends, leap days and the DST changes of Europe/Madrid and America/New_York, as
 * docs/interface-notes.md documents them. TIME_RUNS and TIME_SEED make a longer or a reproducible run.
 */
const RUNS = Number(process.env.TIME_RUNS ?? 12);
const SEED = Number(process.env.TIME_SEED ?? 29_2024);

const ctx: TestContext = await createTestContext();
const ROUTES = enumerateRoutes(ctx.app);
const TZ_ROUTES = ROUTES.filter((r) => r.params.includes('tz'));
const PERIOD_ROUTES = ROUTES.filter((r) => r.params.includes('period'));

let user: TestUser;
let admin: TestUser;
let owned: OwnedRows;

beforeAll(async () => {
  user = await ctx.createUser();
  admin = await ctx.createUser({ role: 'admin' });
  const make = factories(ctx.database.db);
  const { jobId, trainingId } = await make.job(user);
  const { jobId: spareJobId } = await make.job(user, { training_id: trainingId });
  const clientId = await make.client(user);
  const usecaseId = await make.usecase(user, clientId);
  const chatId = await make.chat(user, usecaseId, { hash: 'time-params-chat' });
  owned = { id: user.id, jobId, spareJobId, trainingId, appId: 1, clientId, usecaseId, sentenceId: 1, chatId, chatHash: 'time-params-chat' };
});

afterAll(async () => {
  Settings.now = () => Date.now();
  await ctx.close();
});

// ---------- junk ----------

/** Whether the platform's own time-zone database knows `zone` (the oracle: junk is what it refuses). */
function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const ZONES = Intl.supportedValuesOf('timeZone');

/** Text that is no time zone: random text, near misses of real zones, offsets, paths, control characters, huge. */
const junkZoneText: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.string({ minLength: 1, maxLength: 40, unit: 'binary' }),
    fc.constantFrom('+02:00', 'UTC+2', 'GMT+01:00', 'CEST', 'Europe/Nowhere', 'Europe\\Madrid', 'Europe/Madrid/Extra', 'Europe//Madrid', '../../etc/localtime', '/usr/share/zoneinfo/UTC', 'local', 'system', 'Z', 'Europe/Madrid\u0000', 'Europe/Madrid\r\nX-Injected: 1', 'Ευρώπη/Μαδρίτη', '{{tz}}', "Europe/Madrid' OR '1'='1"),
    fc.tuple(fc.constantFrom(...ZONES), fc.constantFrom('x', '/', '/x', '_', '0', '\u200b', '%20', '..')).map(([zone, tail]) => zone + tail),
    fc.tuple(fc.constantFrom(...ZONES), fc.nat()).map(([zone, at]) => zone.slice(0, at % zone.length) + zone.slice((at % zone.length) + 1)),
    fc.constant('Europe/'.repeat(15_000)),
  )
  .filter((text) => text.trim() !== '' && !knownZone(text) && !LEAK_PATTERN.test(text));

/** A tz that is not a string at all (JSON bodies keep types). */
const junkZoneValue: fc.Arbitrary<unknown> = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant({ zone: 'Europe/Madrid' }), fc.constant([[]]), fc.constant(['Europe/Madrid', 5]));

type Encoding = 'query' | 'form' | 'json' | 'multipart';

/** A request to `route` with `junk` as the value of `name`, every other parameter plausible. */
function request(route: AppRoute, session: string, name: string, junk: unknown, encoding: Encoding): InjectOptions {
  const fields: Record<string, unknown> = {};
  for (const param of new Set(route.params)) {
    const value = plausibleValue(param, route, owned);
    if (value !== undefined) fields[param] = value;
  }
  fields[name] = junk;
  const headers = { authorization: `Bearer ${session}` };
  const text = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  if (route.upload) {
    const body = multipart(text, [{ field: 'Servicefile', filename: 'data.csv', content: 'year,month,day,sales\n2021,1,1,1\n' }]);
    return { method: 'POST', url: route.url, payload: body.payload, headers: { ...headers, ...body.headers } };
  }
  const method = route.method as InjectOptions['method'];
  if (route.method === 'GET' || encoding === 'query') return { method, url: `${route.url}?${new URLSearchParams(text).toString()}`, headers };
  if (encoding === 'json') return { method, url: route.url, payload: JSON.stringify(fields), headers: { ...headers, 'content-type': 'application/json' } };
  if (encoding === 'multipart') {
    const body = multipart(text);
    return { method, url: route.url, payload: body.payload, headers: { ...headers, ...body.headers } };
  }
  const body = form(text);
  return { method, url: route.url, payload: body.payload, headers: { ...headers, ...body.headers } };
}

/** The property: a refusal in the envelope, HTTP 200, naming the parameter, without internals. */
async function expectRefused(options: InjectOptions, name: string) {
  const res = await ctx.app.inject(options);
  const where = `${String(options.method)} ${typeof options.url === 'string' ? options.url.slice(0, 200) : ''}`;
  expect(res.statusCode, `${where}: ${res.body.slice(0, 300)}`).toBe(200);
  const envelope = res.json<{ status: number | string; data: unknown }>();
  expect(Object.keys(envelope).sort(), where).toEqual(['data', 'status']);
  expect(Number(envelope.status), `${where}: ${res.body.slice(0, 300)}`).toBe(1);
  expect(typeof envelope.data, where).toBe('string');
  const message = envelope.data as string;
  expect(message, where).toMatch(new RegExp(`'${name}'`));
  expect(message.length, where).toBeLessThan(2100);
  expect(LEAK_PATTERN.test(message), `${where}: ${message}`).toBe(false);
  return message;
}

const routeSeed = (route: AppRoute) => [...`${route.method} ${route.url}`].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) | 0, SEED);

describe('junk in tz and period is refused in the envelope', () => {
  it('finds the operations that take them', () => {
    expect(TZ_ROUTES.length).toBeGreaterThan(40);
    expect(TZ_ROUTES.map((r) => `${r.method} ${r.url}`)).toEqual(expect.arrayContaining([`GET ${CURRENT}/jobs.php`, `GET ${OLDER}/jobs.php`, `POST ${CURRENT}/data.php`, `GET ${CURRENT}/logs.php`]));
    expect(PERIOD_ROUTES.map((r) => `${r.method} ${r.url}`).sort()).toEqual([`PUT ${OLDER}/data.php`, `PUT ${CURRENT}/data.php`].sort());
  });

  it.each(TZ_ROUTES.map((r) => [`${r.method} ${r.url}`, r] as const))('tz on %s', async (_name, route) => {
    const session = route.url.includes('/logs.php') || route.url.includes('/consumptions.php') || route.url.includes('/handoffs.php') ? admin.session : user.session;
    const encoding = route.method === 'GET' ? fc.constant<Encoding>('query') : fc.constantFrom<Encoding>('query', 'form', 'json', 'multipart');
    await fc.assert(
      fc.asyncProperty(junkZoneText, encoding, async (junk, how) => {
        const message = await expectRefused(request(route, session, 'tz', junk, how), 'tz');
        expect(message).toMatch(/^Invalid parameter 'tz': ('.*' is not a known time zone \(use Area\/City, e\.g\. Europe\/Madrid\)|must not contain NUL characters)$/s);
      }),
      { numRuns: RUNS, seed: routeSeed(route), endOnFailure: true },
    );
    if (route.method !== 'GET' && !route.upload) {
      await fc.assert(
        fc.asyncProperty(junkZoneValue, async (junk) => {
          await expectRefused(request(route, session, 'tz', junk, 'json'), 'tz');
        }),
        { numRuns: Math.max(3, Math.floor(RUNS / 2)), seed: routeSeed(route), endOnFailure: true },
      );
    }
  }, 120_000);

  it.each(PERIOD_ROUTES.map((r) => [`${r.method} ${r.url}`, r] as const))('period on %s', async (_name, route) => {
    const jobId = await datedOutput([['2021', '1', '31', '0', '0', '1']]);
    const before = await outputCount(jobId);
    const junkPeriod = fc
      .oneof(
        fc.string({ minLength: 1, maxLength: 30 }),
        fc.constantFrom('1D', 'P', 'PT', 'P1', 'P1DT', 'PT1D', 'P1H', 'P-1D', 'P1D-', 'P1.5M', 'P0.5Y', 'PT0S', 'P0D', 'P1D P1D', 'P1W1D2', 'p1d', 'P1e3D', 'P1,5D', 'tomorrow', '+1 month', 'last day of next month', '1 month', 'P\u0000D', 'PT-1H'),
        fc.tuple(fc.constantFrom('Y', 'M', 'W', 'D'), fc.integer({ min: -1_000_000, max: -1 })).map(([unit, n]) => `P${n}${unit}`),
      )
      // A well-formed forward period is no junk.
      .filter((text) => text.trim() !== '' && !/^\s*P(\d+[YMWD])*(T(\d+[HMS])+)?\s*$/.test(text));
    await fc.assert(
      fc.asyncProperty(junkPeriod, async (junk) => {
        const options = request({ ...route, params: ['tz', 'job_id', 'output', 'period'] }, user.session, 'period', junk, 'form');
        const message = await expectRefused(withJob(options, jobId), 'period');
        expect(message).toMatch(/^Invalid parameter 'period': /);
      }),
      { numRuns: RUNS * 3, seed: routeSeed(route), endOnFailure: true },
    );
    // Nothing was stored for a refused period.
    expect(await outputCount(jobId)).toBe(before);
  }, 120_000);

  it('answers a period too long for any calendar with a refusal, not an internal error', async () => {
    const jobId = await datedOutput([['2021', '1', '31', '0', '0', '1']]);
    const before = await outputCount(jobId);
    for (const period of ['P300000Y', 'P2147483648Y', 'P99999999999999999999D', 'P3000000M', 'PT9999999999H', 'P10000Y']) {
      const res = await put(CURRENT, { job_id: jobId, output: 1, period });
      expect(res.statusCode, period).toBe(200);
      expect(res.envelope.status, `${period}: ${String(res.envelope.data)}`).toBe(1);
      expect(res.envelope.data, period).toMatch(/^Invalid parameter 'period': /);
    }
    expect(await outputCount(jobId)).toBe(before);
  });
});

// ---------- PUT /data period at month ends, leap days and DST ----------

const HEADER = ['year', 'month', 'day', 'hour', 'minute', 'sales'];

async function datedOutput(rows: string[][]): Promise<number> {
  const { jobId } = await factories(ctx.database.db).job(user);
  await ctx.services.data.writeOutput(jobId, rows.map((r) => Object.fromEntries(HEADER.map((h, i) => [h, r[i]!]))), HEADER);
  return jobId;
}

const outputCount = async (jobId: number) =>
  Number((await ctx.database.db.selectFrom('datasets').select((eb) => eb.fn.countAll().as('n')).where('job_id', '=', jobId).where('kind', '=', 'output').executeTakeFirstOrThrow()).n);

function withJob(options: InjectOptions, jobId: number): InjectOptions {
  const payload = new URLSearchParams(typeof options.payload === 'string' ? options.payload : '');
  payload.set('job_id', String(jobId));
  payload.set('output', '1');
  return { ...options, payload: payload.toString() };
}

const put = (base: string, fields: Record<string, string | number>) => ctx.request({ method: 'PUT', url: `${base}/data.php`, ...form({ session: user.session, tz: 'America/New_York', ...fields }) });

async function movedDates(jobId: number): Promise<string[]> {
  const res = await ctx.request({ method: 'GET', url: `${CURRENT}/data.php?session=${user.session}&tz=Europe/Madrid&job_id=${jobId}&output=1` });
  expect(res.envelope.status, String(res.envelope.data)).toBe(0);
  return (res.envelope.data as Record<string, string>[]).map((r) => `${r.year}-${r.month}-${r.day} ${r.hour}:${r.minute}`);
}

describe('PUT /data period: calendar answers (documented in docs/interface-notes.md)', () => {
  const cases: { why: string; rows: string[][]; period: string; expected: string[] }[] = [
    { why: '31 January + 1 month is the last day of February', rows: [['2021', '1', '31', '10', '0', '1'], ['2020', '1', '31', '10', '0', '2']], period: 'P1M', expected: ['2021-2-28 10:0', '2020-2-29 10:0'] },
    { why: 'a month end + 1 month does not come back to the 31st', rows: [['2021', '2', '28', '0', '0', '1'], ['2021', '4', '30', '0', '0', '2']], period: 'P1M', expected: ['2021-3-28 0:0', '2021-5-30 0:0'] },
    { why: 'months first, then days: 31 January + P1M1D is 1 March', rows: [['2021', '1', '31', '0', '0', '1']], period: 'P1M1D', expected: ['2021-3-1 0:0'] },
    { why: '29 February + 1 year is 28 February; + 4 years is 29 February', rows: [['2020', '2', '29', '12', '30', '1']], period: 'P1Y', expected: ['2021-2-28 12:30'] },
    { why: '29 February + 4 years is 29 February', rows: [['2020', '2', '29', '12', '30', '1']], period: 'P4Y', expected: ['2024-2-29 12:30'] },
    { why: '28 February + 1 day in a leap year is the 29th, else 1 March', rows: [['2024', '2', '28', '0', '0', '1'], ['2023', '2', '28', '0', '0', '2']], period: 'P1D', expected: ['2024-2-29 0:0', '2023-3-1 0:0'] },
    { why: 'a day is 24 hours of wall clock across the Madrid and New York spring DST changes (the data carry no zone)', rows: [['2024', '3', '30', '2', '30', '1'], ['2024', '3', '9', '2', '30', '2']], period: 'P1D', expected: ['2024-3-31 2:30', '2024-3-10 2:30'] },
    { why: 'PT24H is the same as P1D across the autumn DST changes', rows: [['2024', '10', '26', '2', '30', '1'], ['2024', '11', '2', '1', '30', '2']], period: 'PT24H', expected: ['2024-10-27 2:30', '2024-11-3 1:30'] },
    { why: 'hours roll over days, months and years', rows: [['2024', '12', '31', '23', '30', '1']], period: 'PT1H', expected: ['2025-1-1 0:30'] },
  ];

  it.each(cases.map((c) => [c.why, c] as const))('%s', async (_why, c) => {
    for (const base of [CURRENT, OLDER]) {
      const jobId = await datedOutput(c.rows);
      const res = await put(base, { job_id: jobId, output: 1, period: c.period });
      expect(res.envelope.status, String(res.envelope.data)).toBe(0);
      expect(await movedDates(jobId)).toEqual(c.expected);
    }
  });
});

// ---------- tz: date filters and timestamps at the DST changes ----------

/** Log entries one per hour (at half past, UTC) from `fromUtc` for `hours` hours, marked for a search. */
async function hourlyLogs(marker: string, fromUtc: string, hours: number) {
  const start = Date.parse(fromUtc);
  await ctx.database.db
    .insertInto('logs')
    .values(Array.from({ length: hours }, (_, i) => ({ host: 'tz-test', pid: 1, procedure: 'tz', type: 1, text: `${marker} ${i}`, user_id: admin.id, created_at: new Date(start + i * 3_600_000) })))
    .execute();
}

async function logDates(marker: string, tz: string, range: { date_from?: string; date_to?: string }): Promise<string[]> {
  const query = new URLSearchParams({ session: admin.session, tz, search: marker, limit: '1000', ...range });
  const res = await ctx.request({ method: 'GET', url: `${CURRENT}/logs.php?${query.toString()}` });
  expect(res.envelope.status, String(res.envelope.data)).toBe(0);
  return (res.envelope.data as { date: string }[]).map((r) => r.date).reverse();
}

/** The same request answered with luxon's clock in January and in July: it must not depend on the season. */
async function inBothSeasons<T>(ask: () => Promise<T>): Promise<T> {
  const answers: T[] = [];
  for (const now of [Date.UTC(2026, 0, 15), Date.UTC(2026, 6, 15)]) {
    Settings.now = () => now;
    try {
      answers.push(await ask());
    } finally {
      Settings.now = () => Date.now();
    }
  }
  expect(answers[1]).toEqual(answers[0]);
  return answers[0]!;
}

describe('tz at the DST changes (documented in docs/interface-notes.md)', () => {
  beforeAll(async () => {
    await hourlyLogs('madrid-spring', '2024-03-30T21:30:00Z', 30);
    await hourlyLogs('madrid-autumn', '2024-10-26T20:30:00Z', 32);
    await hourlyLogs('newyork-spring', '2024-03-10T03:30:00Z', 30);
    await hourlyLogs('newyork-autumn', '2024-11-03T02:30:00Z', 32);
  });

  it('a day in a date filter is the local day: 23 hours when DST starts, 25 when it ends', async () => {
    const day = (marker: string, tz: string, date: string) => inBothSeasons(() => logDates(marker, tz, { date_from: date, date_to: date }));
    const spring = await day('madrid-spring', 'Europe/Madrid', '2024-03-31');
    expect(spring).toHaveLength(23);
    expect(spring.slice(0, 3)).toEqual(['2024-03-31 00:30:00', '2024-03-31 01:30:00', '2024-03-31 03:30:00']);
    expect(spring.at(-1)).toBe('2024-03-31 23:30:00');
    const autumn = await day('madrid-autumn', 'Europe/Madrid', '2024-10-27');
    expect(autumn).toHaveLength(25);
    // The repeated hour shows twice: the legacy timestamp text has no offset.
    expect(autumn.slice(1, 5)).toEqual(['2024-10-27 01:30:00', '2024-10-27 02:30:00', '2024-10-27 02:30:00', '2024-10-27 03:30:00']);
    expect(await day('newyork-spring', 'America/New_York', '2024-03-10')).toHaveLength(23);
    const nyAutumn = await day('newyork-autumn', 'America/New_York', '2024-11-03');
    expect(nyAutumn).toHaveLength(25);
    expect(nyAutumn.slice(0, 4)).toEqual(['2024-11-03 00:30:00', '2024-11-03 01:30:00', '2024-11-03 01:30:00', '2024-11-03 02:30:00']);
  });

  it('a wall time the clocks skip is read one gap later (02:30 is 03:30)', async () => {
    const madrid = await inBothSeasons(() => logDates('madrid-spring', 'Europe/Madrid', { date_from: '2024-03-31 02:30' }));
    expect(madrid[0]).toBe('2024-03-31 03:30:00');
    // As an inclusive upper bound it ends the minute after 03:30, so the 01:30 row is the last before it.
    const upTo = await inBothSeasons(() => logDates('madrid-spring', 'Europe/Madrid', { date_from: '2024-03-31', date_to: '2024-03-31 02:30' }));
    expect(upTo).toEqual(['2024-03-31 00:30:00', '2024-03-31 01:30:00', '2024-03-31 03:30:00']);
    const newYork = await inBothSeasons(() => logDates('newyork-spring', 'America/New_York', { date_from: '2024-03-10 02:30' }));
    expect(newYork[0]).toBe('2024-03-10 03:30:00');
  });

  it('a wall time the clocks show twice is its first instant, whatever the season the service runs in', async () => {
    // From the first 02:30 (00:30 UTC): both 02:30 rows are in.
    const from = await inBothSeasons(() => logDates('madrid-autumn', 'Europe/Madrid', { date_from: '2024-10-27 02:30' }));
    expect(from.slice(0, 3)).toEqual(['2024-10-27 02:30:00', '2024-10-27 02:30:00', '2024-10-27 03:30:00']);
    // Up to and including the first 02:30 minute: the second 02:30 (one hour later) is out.
    const to = await inBothSeasons(() => logDates('madrid-autumn', 'Europe/Madrid', { date_from: '2024-10-27', date_to: '2024-10-27 02:30' }));
    expect(to).toEqual(['2024-10-27 00:30:00', '2024-10-27 01:30:00', '2024-10-27 02:30:00']);
    const newYork = await inBothSeasons(() => logDates('newyork-autumn', 'America/New_York', { date_from: '2024-11-03 01:30' }));
    expect(newYork.slice(0, 3)).toEqual(['2024-11-03 01:30:00', '2024-11-03 01:30:00', '2024-11-03 02:30:00']);
  });

  it('renders the same instants in each zone, and a filter day in another zone is that zone\'s day', async () => {
    const utc = await logDates('madrid-autumn', 'UTC', { date_from: '2024-10-27', date_to: '2024-10-27' });
    expect(utc).toHaveLength(24);
    expect(utc[0]).toBe('2024-10-27 00:30:00');
    const kolkata = await logDates('madrid-autumn', 'Asia/Kolkata', { date_from: '2024-10-27 06:00', date_to: '2024-10-27 06:59' });
    expect(kolkata).toEqual(['2024-10-27 06:00:00']);
  });
});
