import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { CURRENT, OLDER, createTestContext, form, multipart, type TestContext, type TestUser } from '../support/helper.js';

let ctx: TestContext;
let alice: TestUser;
let bob: TestUser;
let admin: TestUser;
beforeAll(async () => {
  ctx = await createTestContext({ env: { MAX_UPLOAD_MB: '0.05' } });
  alice = await ctx.createUser({ name: 'Alice' });
  bob = await ctx.createUser({ name: 'Bob' });
  admin = await ctx.createUser({ role: 'admin' });
});
afterAll(async () => {
  await ctx?.close();
});

const TZ = 'Europe/Madrid';
const SALES = 'year,month,day,store,price,sales\n2021,1,30,A,10.5,100\n2021,1,31,B,11,200\n2021,2,1,A,9.75,150\n2021,2,2,B,12,\n2021,2,3,A,8,\n';
const SALES_ROWS = [
  { year: '2021', month: '1', day: '30', store: 'A', price: '10.5', sales: '100' },
  { year: '2021', month: '1', day: '31', store: 'B', price: '11', sales: '200' },
  { year: '2021', month: '2', day: '1', store: 'A', price: '9.75', sales: '150' },
  { year: '2021', month: '2', day: '2', store: 'B', price: '12', sales: '' },
  { year: '2021', month: '2', day: '3', store: 'A', price: '8', sales: '' },
];

const newJob = async (user: TestUser): Promise<number> => (await factories(ctx.database.db).job(user)).jobId;
const jobStatus = async (id: number) => (await ctx.database.db.selectFrom('jobs').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
const datasetCount = async (jobId: number) =>
  (await ctx.database.db.selectFrom('datasets').select((eb) => eb.fn.countAll<number>().as('n')).where('job_id', '=', jobId).executeTakeFirstOrThrow()).n;

async function upload(user: TestUser, jobId: number, content: string | Buffer, options: { base?: string; field?: string; extra?: Record<string, string | number> } = {}) {
  const body = multipart({ session: user.session, job_id: jobId, ...options.extra }, [{ field: options.field ?? 'Servicefile', filename: 'data.csv', content }]);
  return ctx.request({ method: 'POST', url: `${options.base ?? CURRENT}/data.php?tz=${TZ}`, ...body });
}
const get = (user: TestUser, query: string, base = CURRENT) => ctx.request({ method: 'GET', url: `${base}/data.php?session=${user.session}&tz=${TZ}&${query}` });

async function jobWithSales(user = alice): Promise<number> {
  const jobId = await newJob(user);
  const res = await upload(user, jobId, SALES);
  expect(res.envelope).toEqual({ status: 0, data: `Data stored for job ${jobId}: 5 rows, 6 columns from 1 file` });
  return jobId;
}

/** 30 output rows, sales 10..300, for the insight rules. */
async function withOutput(jobId: number): Promise<number> {
  const header = ['year', 'month', 'day', 'store', 'price', 'sales'];
  const rows = Array.from({ length: 30 }, (_, i) => ({ year: '2021', month: '1', day: String(i + 1), store: i % 2 ? 'B' : 'A', price: '10', sales: String((i + 1) * 10) }));
  return ctx.services.data.writeOutput(jobId, rows, header);
}

describe('POST /data and GET /data (current version)', () => {
  it('stores a CSV, queues the job and lists columns with detected type and role', async () => {
    const jobId = await newJob(alice);
    expect(await jobStatus(jobId)).toBe(0);
    const res = await upload(alice, jobId, SALES);
    expect(res.envelope.status).toBe(0);
    expect(await jobStatus(jobId)).toBe(1);
    const types = await get(alice, `type=1&job_id=${jobId}`);
    expect(types.envelope).toEqual({
      status: 0,
      data: [
        { name: 'year', type: 'date', role: 'date', date_part: 'year' },
        { name: 'month', type: 'date', role: 'date', date_part: 'month' },
        { name: 'day', type: 'date', role: 'date', date_part: 'day' },
        { name: 'store', type: 'categorical', role: 'input' },
        { name: 'price', type: 'numeric', role: 'input' },
        { name: 'sales', type: 'numeric', role: 'output' },
      ],
    });
    const catalogue = await get(alice, 'type=1');
    expect(catalogue.envelope.data.map((v: { type: string }) => v.type)).toContain('ignore');
  });

  it('answers input rows with limit, progress and alter as the 4.5 table says', async () => {
    const jobId = await jobWithSales();
    expect((await get(alice, `job_id=${jobId}`)).envelope).toEqual({ status: 0, data: SALES_ROWS });
    expect((await get(alice, `job_id=${jobId}&output=0&limit=0`)).envelope.data).toEqual(SALES_ROWS);
    expect((await get(alice, `job_id=${jobId}&limit=2`)).envelope.data).toEqual(SALES_ROWS.slice(0, 2));
    expect((await get(alice, `job_id=${jobId}&progress=1`)).envelope).toEqual({ status: 0, data: [{ count: '5' }] });
    const altered = await get(alice, `job_id=${jobId}&limit=3&alter=10&estimate=price`);
    expect(altered.envelope.data).toEqual([
      { ...SALES_ROWS[0], price: '11.55' },
      { ...SALES_ROWS[1], price: '12.1' },
      { ...SALES_ROWS[2], price: '10.725' },
    ]);
    const lowered = await get(alice, `job_id=${jobId}&limit=1&alter=-50&estimate=sales`);
    expect(lowered.envelope.data).toEqual([{ ...SALES_ROWS[0], sales: '50' }]);
    // insight applies only to output rows: on input it is ignored (no estimate needed).
    expect((await get(alice, `job_id=${jobId}&insight=2&limit=1`)).envelope.data).toEqual(SALES_ROWS.slice(0, 1));
  });

  it('answers output rows with insight 1 (about 80%) and 2 (20 rows) sorted by estimate, and alter', async () => {
    const jobId = await jobWithSales();
    expect((await get(alice, `job_id=${jobId}&output=1`)).envelope).toEqual({ status: 0, data: [] });
    expect((await get(alice, `job_id=${jobId}&output=1&progress=1`)).envelope.data).toEqual([{ count: '0' }]);
    await withOutput(jobId);
    const all = (await get(alice, `job_id=${jobId}&output=1&limit=5`)).envelope.data;
    expect(all).toHaveLength(30); // limit is for input rows only
    expect(all[0]).toEqual({ year: '2021', month: '1', day: '1', store: 'A', price: '10', sales: '10' });
    expect((await get(alice, `job_id=${jobId}&output=1&progress=1`)).envelope.data).toEqual([{ count: '30' }]);
    const eighty = (await get(alice, `job_id=${jobId}&output=1&insight=1&estimate=sales`)).envelope.data;
    expect(eighty).toHaveLength(24);
    expect(eighty.map((r: { sales: string }) => r.sales)).toEqual(Array.from({ length: 24 }, (_, i) => String((30 - i) * 10)));
    const twenty = (await get(alice, `job_id=${jobId}&output=1&insight=2&estimate=sales`)).envelope.data;
    expect(twenty).toHaveLength(20);
    expect(twenty[0]).toEqual({ year: '2021', month: '1', day: '30', store: 'B', price: '10', sales: '300' });
    expect(twenty[19].sales).toBe('110');
    const both = (await get(alice, `job_id=${jobId}&output=1&insight=2&alter=5&estimate=sales`)).envelope.data;
    expect(both.slice(0, 2).map((r: { sales: string }) => r.sales)).toEqual(['315', '304.5']);
  });

  it('rejects insight or alter without a valid estimate, and bad parameters', async () => {
    const jobId = await jobWithSales();
    await withOutput(jobId);
    expect((await get(alice, `job_id=${jobId}&output=1&insight=1`)).envelope).toEqual({ status: 1, data: "Missing required parameter 'estimate'" });
    expect((await get(alice, `job_id=${jobId}&alter=5`)).envelope).toEqual({ status: 1, data: "Missing required parameter 'estimate'" });
    const unknown = await get(alice, `job_id=${jobId}&alter=5&estimate=nope`);
    expect(unknown.envelope.status).toBe(1);
    expect(unknown.envelope.data).toBe("Invalid parameter 'estimate': 'nope' is not a column of the data (columns: year, month, day, store, price, sales)");
    expect((await get(alice, `job_id=${jobId}&output=1&insight=3&estimate=sales`)).envelope).toEqual({ status: 1, data: "Invalid parameter 'insight': must be 0, 1 or 2" });
    expect((await get(alice, 'type=0')).envelope).toEqual({ status: 1, data: "Missing required parameter 'job_id'" });
    expect((await ctx.request({ method: 'GET', url: `${CURRENT}/data.php?session=${alice.session}&job_id=${jobId}` })).envelope).toEqual({
      status: 1,
      data: "Missing required parameter 'tz'",
    });
  });

  it('keeps consumers apart; administrators see every job', async () => {
    const jobId = await jobWithSales(alice);
    expect((await get(bob, `job_id=${jobId}`)).envelope).toEqual({ status: 1, data: `Job ${jobId} not found` });
    expect((await get(bob, `type=1&job_id=${jobId}`)).envelope).toEqual({ status: 1, data: `Job ${jobId} not found` });
    expect((await upload(bob, jobId, SALES)).envelope).toEqual({ status: 1, data: `Job ${jobId} not found` });
    const put = await ctx.request({ method: 'PUT', url: `${CURRENT}/data.php`, ...form({ session: bob.session, job_id: jobId, output: 0, store: 'ignore' }) });
    expect(put.envelope).toEqual({ status: 1, data: `Job ${jobId} not found` });
    expect((await get(admin, `job_id=${jobId}&limit=1`)).envelope.data).toEqual(SALES_ROWS.slice(0, 1));
    expect((await get(alice, `job_id=${jobId}&limit=1`)).envelope.data).toEqual(SALES_ROWS.slice(0, 1));
  });
});

describe('upload formats and rejections', () => {
  it("reads a ';'-separated Latin-1 file with Spanish date columns", async () => {
    const jobId = await newJob(alice);
    const latin1 = Buffer.from('año;mes;día;región;ventas\r\n2021;1;5;Córdoba;10\r\n2021;1;6;Málaga;12\r\n', 'latin1');
    expect((await upload(alice, jobId, latin1)).envelope.status).toBe(0);
    expect((await get(alice, `job_id=${jobId}`)).envelope.data).toEqual([
      { año: '2021', mes: '1', día: '5', región: 'Córdoba', ventas: '10' },
      { año: '2021', mes: '1', día: '6', región: 'Málaga', ventas: '12' },
    ]);
    const roles = (await get(alice, `type=1&job_id=${jobId}`)).envelope.data.map((c: { role: string }) => c.role);
    expect(roles).toEqual(['date', 'date', 'date', 'input', 'output']);
  });

  it('reads UTF-8 with a BOM, tabs, quoted cells with delimiters, line breaks and backslashes', async () => {
    const jobId = await newJob(alice);
    const text = '\ufeffname\tnote\tvalue\nplain\tx\t1\n"quoted\ttab"\t"two\nlines"\t2\nback\\slash\t"say ""hi"""\t3\n';
    expect((await upload(alice, jobId, text)).envelope.status).toBe(0);
    expect((await get(alice, `job_id=${jobId}`)).envelope.data).toEqual([
      { name: 'plain', note: 'x', value: '1' },
      { name: 'quoted\ttab', note: 'two\nlines', value: '2' },
      { name: 'back\\slash', note: 'say "hi"', value: '3' },
    ]);
  });

  const rejections: [string, string | Buffer, string][] = [
    ['an empty file', '', "Invalid upload: 'data.csv' is empty: a header row with the column names is required"],
    ['a header without rows', 'a,b,c\n', "Invalid upload: 'data.csv' has a header row but no data rows"],
    ['a duplicate header', 'a,b,A\n1,2,3\n', "Invalid upload: the header row of 'data.csv' names column 'A' twice (columns 1 and 3)"],
    ['an empty header', 'a,,c\n1,2,3\n', "Invalid upload: column 2 of the header row of 'data.csv' has no name"],
    ['a missing header', '1,2,3\n4,5,6\n', "Invalid upload: 'data.csv' has no header row: the first row must hold the column names, not numbers"],
    ['a short row', 'a,b,c\n1,2,3\n4,5\n6,7,8\n', "Invalid upload: line 3 of 'data.csv' has 2 fields but the header has 3"],
    ['a long quoted row', 'a,b,c\n1,2,3\n"4",5,6,7\n', "Invalid upload: line 3 of 'data.csv' has 4 fields but the header has 3"],
    ['an unclosed quote', 'a,b\n1,"2\n3,4\n', "Invalid upload: 'data.csv' is not valid CSV"],
    ['a UTF-16 file', Buffer.from([0xff, 0xfe, 0x61, 0x00]), "Invalid upload: 'data.csv' is UTF-16; save it as UTF-8 or Latin-1"],
    ['a file over MAX_UPLOAD_MB', `a,b\n${'1,2\n'.repeat(20_000)}`, 'Invalid upload: '],
  ];
  for (const [what, content, message] of rejections) {
    it(`rejects ${what} and stores nothing`, async () => {
      const jobId = await newJob(alice);
      const res = await upload(alice, jobId, content);
      expect(res.statusCode).toBe(200);
      expect(res.envelope.status).toBe(1);
      expect(res.envelope.data).toContain(message);
      expect(await datasetCount(jobId)).toBe(0);
      expect(await jobStatus(jobId)).toBe(0);
    });
  }

  it('keeps the previous data when a replacement upload fails', async () => {
    const jobId = await jobWithSales();
    expect((await upload(alice, jobId, 'a,b\n1,2\n3\n')).envelope.status).toBe(1);
    expect((await get(alice, `job_id=${jobId}`)).envelope.data).toEqual(SALES_ROWS);
  });

  it('leaves nothing visible when the upload is cut half-way', async () => {
    const jobId = await newJob(alice);
    const big = `a,b,c\n${'1,2,3\n'.repeat(5000)}`;
    const body = multipart({ session: alice.session, job_id: jobId }, [{ field: 'Servicefile', filename: 'data.csv', content: big }]);
    const cut = body.payload.subarray(0, Math.floor(body.payload.length * 0.6));
    const res = await ctx.request({ method: 'POST', url: `${CURRENT}/data.php?tz=${TZ}`, payload: cut, headers: body.headers });
    expect(res.envelope.status).toBe(1);
    expect(await datasetCount(jobId)).toBe(0);
    expect(await jobStatus(jobId)).toBe(0);
    expect((await get(alice, `job_id=${jobId}&progress=1`)).envelope.data).toEqual([{ count: '0' }]);
  });

  it('takes several files with file=2 and checks the count and headers', async () => {
    const jobId = await newJob(alice);
    const two = (extra: Record<string, number>, second = 'a,b\n3,4\n') =>
      multipart({ session: alice.session, job_id: jobId, ...extra }, [
        { field: 'Servicefile', filename: 'one.csv', content: 'a,b\n1,2\n' },
        { field: 'Servicefile', filename: 'two.csv', content: second },
      ]);
    const ok = await ctx.request({ method: 'POST', url: `${CURRENT}/data.php?tz=${TZ}`, ...two({ file: 2 }) });
    expect(ok.envelope).toEqual({ status: 0, data: `Data stored for job ${jobId}: 2 rows, 2 columns from 2 files` });
    expect((await get(alice, `job_id=${jobId}`)).envelope.data).toEqual([
      { a: '1', b: '2' },
      { a: '3', b: '4' },
    ]);
    const wrongCount = await ctx.request({ method: 'POST', url: `${CURRENT}/data.php?tz=${TZ}`, ...two({ file: 1 }) });
    expect(wrongCount.envelope).toEqual({ status: 1, data: "Invalid parameter 'file': says 1 file but 2 were sent" });
    const otherHeader = await ctx.request({ method: 'POST', url: `${CURRENT}/data.php?tz=${TZ}`, ...two({ file: 2 }, 'a,c\n3,4\n') });
    expect(otherHeader.envelope.data).toBe("Invalid upload: 'two.csv' has the columns a, c but the first file has a, b");
    expect((await get(alice, `job_id=${jobId}&progress=1`)).envelope.data).toEqual([{ count: '2' }]);
  });

  it('accepts the file before the session and job fields (spooled), and a bearer session', async () => {
    const jobId = await newJob(alice);
    const boundary = '----mtcsfirst';
    const payload = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="Servicefile"; filename="early.csv"\r\nContent-Type: text/csv\r\n\r\nx,y\n1,2\n\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="job_id"\r\n\r\n${jobId}\r\n--${boundary}--\r\n`,
    );
    const res = await ctx.request({
      method: 'POST',
      url: `${CURRENT}/data.php?tz=${TZ}`,
      payload,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: `Bearer ${alice.session}` },
    });
    expect(res.envelope).toEqual({ status: 0, data: `Data stored for job ${jobId}: 1 rows, 2 columns from 1 file` });
    const none = await ctx.request({ method: 'POST', url: `${CURRENT}/data.php?tz=${TZ}`, ...multipart({ job_id: jobId }, [{ field: 'Servicefile', filename: 'a.csv', content: 'x\n1\n' }]) });
    expect(none.envelope).toEqual({ status: 1, data: "Missing required parameter 'session'" });
    const noFile = await ctx.request({ method: 'POST', url: `${CURRENT}/data.php?tz=${TZ}`, ...multipart({ session: alice.session, job_id: jobId }) });
    expect(noFile.envelope).toEqual({ status: 1, data: "Missing required parameter 'Servicefile'" });
  });
});

describe('PUT /data', () => {
  const put = (user: TestUser, fields: Record<string, string | number>, base = CURRENT) =>
    ctx.request({ method: 'PUT', url: `${base}/data.php`, ...form({ session: user.session, ...fields }) });

  async function jobWithDatedOutput(rows: string[][]): Promise<number> {
    const jobId = await jobWithSales();
    const header = ['year', 'month', 'day', 'hour', 'sales'];
    await ctx.services.data.writeOutput(jobId, rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]!]))), header);
    return jobId;
  }
  const dates = (rows: Record<string, string>[]) => rows.map((r) => `${r.year}-${r.month}-${r.day} ${r.hour}`);

  it('moves the output dates ahead by P1D, PT1H and P1M into new output records', async () => {
    // hour is not a column of the input: the output column gets its role from its name.
    const jobId = await jobWithDatedOutput([
      ['2021', '1', '31', '23', '5'],
      ['2020', '2', '29', '0', '6'],
      ['2021', '12', '31', '12', '7'],
    ]);
    const day = await put(alice, { job_id: jobId, output: 1, period: 'P1D' });
    expect(day.envelope.status).toBe(0);
    expect(typeof day.envelope.data).toBe('number');
    expect(dates((await get(alice, `job_id=${jobId}&output=1`)).envelope.data)).toEqual(['2021-2-1 23', '2020-3-1 0', '2022-1-1 12']);
    const hour = await put(alice, { job_id: jobId, output: 1, period: 'PT1H' });
    expect(hour.envelope.data).toBeGreaterThan(day.envelope.data);
    expect(dates((await get(alice, `job_id=${jobId}&output=1`)).envelope.data)).toEqual(['2021-2-2 0', '2020-3-1 1', '2022-1-1 13']);
    const month = await put(alice, { job_id: jobId, output: 1, period: 'P1M' });
    expect(month.envelope.status).toBe(0);
    expect(dates((await get(alice, `job_id=${jobId}&output=1`)).envelope.data)).toEqual(['2021-3-2 0', '2020-4-1 1', '2022-2-1 13']);
    const outputs = await ctx.database.db.selectFrom('datasets').select('id').where('job_id', '=', jobId).where('kind', '=', 'output').execute();
    expect(outputs).toHaveLength(4);
  });

  it('keeps a month end when moving by P1M', async () => {
    const jobId = await jobWithDatedOutput([['2021', '1', '31', '0', '1']]);
    await put(alice, { job_id: jobId, output: 1, period: 'P1M' });
    expect(dates((await get(alice, `job_id=${jobId}&output=1`)).envelope.data)).toEqual(['2021-2-28 0']);
    await put(alice, { job_id: jobId, output: 1, period: 'P1Y2M' });
    expect(dates((await get(alice, `job_id=${jobId}&output=1`)).envelope.data)).toEqual(['2022-4-28 0']);
  });

  it('rejects invalid periods and a job without output', async () => {
    const jobId = await jobWithDatedOutput([['2021', '1', '31', '0', '1']]);
    for (const period of ['P1X', '1D', 'tomorrow', 'P1D2']) {
      const res = await put(alice, { job_id: jobId, output: 1, period });
      expect(res.envelope.status).toBe(1);
      expect(res.envelope.data).toBe(`Invalid parameter 'period': '${period}' is not an ISO 8601 duration such as P1D, PT6H or P1Y2M`);
    }
    expect((await put(alice, { job_id: jobId, output: 1, period: 'PT0S' })).envelope.data).toBe("Invalid parameter 'period': 'PT0S' is an empty interval");
    expect((await put(alice, { job_id: jobId, output: 1, period: 'P0.5D' })).envelope.data).toBe(
      "Invalid parameter 'period': 'P0.5D' must use whole years, months, days, hours and minutes",
    );
    const bare = await jobWithSales();
    expect((await put(alice, { job_id: bare, output: 1, period: 'P1D' })).envelope).toEqual({ status: 1, data: `Job ${bare} has no output yet` });
    expect((await put(alice, { job_id: bare, output: 0 })).envelope).toEqual({ status: 1, data: "Missing required parameter 'period'" });
  });

  it('drops a column with ignore and sets roles with data types, in both versions', async () => {
    const jobId = await jobWithSales();
    expect((await put(alice, { job_id: jobId, output: 0, store: 'ignore', price: 'output', sales: 'input' })).envelope).toEqual({ status: 0, data: 'success' });
    const types = (await get(alice, `type=1&job_id=${jobId}`)).envelope.data;
    expect(types.map((c: { name: string; role: string }) => `${c.name}:${c.role}`)).toEqual(['year:date', 'month:date', 'day:date', 'price:output', 'sales:input']);
    expect((await get(alice, `job_id=${jobId}&limit=1`)).envelope.data).toEqual([{ year: '2021', month: '1', day: '30', price: '10.5', sales: '100' }]);
    const bad = await put(alice, { job_id: jobId, output: 0, price: 'banana' });
    expect(bad.envelope.data).toBe("Invalid parameter 'price': must be ignore, input, output, numeric, categorical or a date part (year, month, day, hour, minute)");
    const older = await put(alice, { tz: TZ, job_id: jobId, price: 'categorical' }, OLDER);
    expect(older.envelope).toEqual({ status: 0, data: 'success' });
    expect((await get(alice, `job_id=${jobId}`, OLDER)).envelope.data.find((c: { name: string }) => c.name === 'price').type).toBe('categorical');
    expect((await put(alice, { job_id: jobId, price: 'input' }, OLDER)).envelope).toEqual({ status: 1, data: "Missing required parameter 'tz'" });
  });
});

describe('older version /data.php', () => {
  it('uploads through servicefile, defaults type to 1 and requires the type=0 parameters', async () => {
    const jobId = await newJob(alice);
    const res = await upload(alice, jobId, SALES, { base: OLDER, field: 'servicefile' });
    expect(res.envelope.status).toBe(0);
    const types = await get(alice, `job_id=${jobId}`, OLDER);
    expect(types.envelope.data[5]).toEqual({ name: 'sales', type: 'numeric', role: 'output' });
    const missing = await get(alice, `type=0&job_id=${jobId}&output=0&progress=0&insight=0&alter=0`, OLDER);
    expect(missing.envelope).toEqual({ status: 1, data: "Missing required parameter 'limit'" });
    const rows = await get(alice, `type=0&job_id=${jobId}&output=0&progress=0&limit=2&insight=0&alter=0&estimate=`, OLDER);
    expect(rows.envelope).toEqual({ status: 0, data: SALES_ROWS.slice(0, 2) });
    const noTz = await ctx.request({ method: 'GET', url: `${OLDER}/data.php?session=${alice.session}` });
    expect(noTz.envelope).toEqual({ status: 1, data: "Missing required parameter 'tz'" });
    expect((await ctx.request({ method: 'GET', url: `${OLDER}/zdai.php?session=${alice.session}` })).statusCode).toBe(404);
  });
});

describe('data tables /zdai and /zdao', () => {
  const zdai = (user: TestUser, jobId: number, info: unknown, groupOrder: number, loadColumns: number) =>
    ctx.request({
      method: 'GET',
      url: `${CURRENT}/zdai.php?session=${user.session}&tz=${TZ}&job_id=${jobId}&group_order=${groupOrder}&load_columns=${loadColumns}&columns_info=${encodeURIComponent(typeof info === 'string' ? info : JSON.stringify(info))}`,
    });

  it('groups, aggregates, filters and orders input rows', async () => {
    const jobId = await jobWithSales();
    const grouped = await zdai(alice, jobId, [{ name: 'store' }, { name: 'sales', aggregate: 'sum' }, { name: 'price', aggregate: 'avg' }, { name: 'price', aggregate: 'count' }], 1, 0);
    expect(grouped.envelope).toEqual({
      status: 0,
      data: [
        { store: 'A', 'sum(sales)': '250', 'avg(price)': '9.416667', 'count(price)': '3' },
        { store: 'B', 'sum(sales)': '200', 'avg(price)': '11.5', 'count(price)': '2' },
      ],
    });
    const filtered = await zdai(alice, jobId, [{ name: 'store', order: 'desc' }, { name: 'sales', aggregate: 'max' }, { name: 'month', value: '1' }], 1, 2);
    expect(filtered.envelope.data).toEqual([
      { store: 'B', 'max(sales)': '200' },
      { store: 'A', 'max(sales)': '100' },
    ]);
    const plain = await zdai(alice, jobId, [{ name: 'day' }, { name: 'price', from: 9, to: 11 }], 0, 0);
    expect(plain.envelope.data).toEqual([
      { day: '30', price: '10.5' },
      { day: '31', price: '11' },
      { day: '1', price: '9.75' },
    ]);
    const total = await zdai(alice, jobId, { name: 'sales', aggregate: 'sum' }, 0, 1);
    expect(total.envelope.data).toEqual([{ 'sum(sales)': '450' }]);
  });

  it('rejects columns_info that is not JSON, names unknown columns or asks for other aggregates', async () => {
    const jobId = await jobWithSales();
    expect((await zdai(alice, jobId, '{nope', 1, 0)).envelope).toEqual({ status: 1, data: "Invalid parameter 'columns_info': is not valid JSON" });
    const unknown = await zdai(alice, jobId, [{ name: 'x; drop table users' }], 1, 0);
    expect(unknown.envelope.data).toBe(`Invalid parameter 'columns_info': 'x; drop table users' is not a column of job ${jobId} (columns: year, month, day, store, price, sales)`);
    const aggregate = await zdai(alice, jobId, [{ name: 'sales', aggregate: 'pg_sleep' }], 1, 0);
    expect(aggregate.envelope.status).toBe(1);
    expect(aggregate.envelope.data).toContain("Invalid parameter 'columns_info'");
    expect((await zdai(bob, jobId, [{ name: 'sales' }], 1, 0)).envelope).toEqual({ status: 1, data: `Job ${jobId} not found` });
  });

  it('confirms an output and replaces items with values by probability', async () => {
    const jobId = await jobWithSales();
    const zdao = (user: TestUser) => ctx.request({ method: 'GET', url: `${CURRENT}/zdao.php?session=${user.session}&job_id=${jobId}` });
    expect((await zdao(alice)).envelope).toEqual({ status: 1, data: `Job ${jobId} has no output yet` });
    const outputId = await withOutput(jobId);
    expect((await zdao(alice)).envelope).toEqual({ status: 0, data: `Output ${outputId} of job ${jobId}: 30 rows, 6 columns` });
    expect((await zdao(bob)).envelope).toEqual({ status: 1, data: `Job ${jobId} not found` });
    const replace = (fields: Record<string, string | number>) =>
      ctx.request({ method: 'POST', url: `${CURRENT}/zdao.php?session=${alice.session}&tz=${TZ}`, ...form({ job_id: jobId, ...fields }) });
    expect((await replace({ items: 'A', values: 'Alpha', probability: 0 })).envelope).toEqual({ status: 0, data: 'success' });
    const stores = async () => (await get(alice, `job_id=${jobId}&output=1`)).envelope.data.map((r: { store: string }) => r.store);
    expect(new Set(await stores())).toEqual(new Set(['A', 'B']));
    expect((await replace({ items: 'A,B', values: 'Alpha,Beta', probability: 1 })).envelope).toEqual({ status: 0, data: 'success' });
    expect(new Set(await stores())).toEqual(new Set(['Alpha', 'Beta']));
    expect((await replace({ items: 'A', values: 'x', probability: 2 })).envelope).toEqual({ status: 1, data: "Invalid parameter 'probability': must be a number between 0 and 1" });
    expect((await replace({ items: 'A,B,C', values: 'x,y', probability: 1 })).envelope.data).toBe(
      "Invalid parameter 'values': gives 2 values for 3 items; give one value or one per item",
    );
  });
});

describe('prediction intervals of an output', () => {
  const bounds = (v: number) => ({ lo80: String(v - 1), hi80: String(v + 1), lo95: String(v - 2), hi95: String(v + 2) });

  it('keeps them out of every legacy view and adds <column>_lo80.._hi95 with intervals=1, in both versions', async () => {
    const jobId = await jobWithSales();
    const header = ['year', 'month', 'day', 'store', 'price', 'sales'];
    const rows = [
      { year: '2021', month: '2', day: '2', store: 'B', price: '12', sales: '160' },
      { year: '2021', month: '2', day: '3', store: 'A', price: '8', sales: '170' },
    ];
    const outputId = await ctx.services.data.writeOutput(jobId, rows, header, [{ sales: bounds(160) }, { sales: bounds(170) }]);

    // Default: exactly the rows a legacy client always got.
    expect((await get(alice, `type=0&job_id=${jobId}&output=1`)).envelope.data).toEqual(rows);
    expect(Object.keys((await get(alice, `type=0&job_id=${jobId}&output=1`)).envelope.data[0])).toEqual(header);
    expect((await get(alice, `type=0&job_id=${jobId}&output=1&intervals=0`)).envelope.data).toEqual(rows);
    const withBounds = [
      { ...rows[0], sales_lo80: '159', sales_hi80: '161', sales_lo95: '158', sales_hi95: '162' },
      { ...rows[1], sales_lo80: '169', sales_hi80: '171', sales_lo95: '168', sales_hi95: '172' },
    ];
    expect((await get(alice, `type=0&job_id=${jobId}&output=1&intervals=1`)).envelope.data).toEqual(withBounds);
    const older = `type=0&job_id=${jobId}&output=1&progress=0&limit=0&insight=0&alter=0&estimate=`;
    expect((await get(alice, older, OLDER)).envelope.data).toEqual(rows);
    expect((await get(alice, `${older}&intervals=1`, OLDER)).envelope.data).toEqual(withBounds);
    // Input rows never have intervals; insight may sort by a bound when they are asked for.
    expect(Object.keys((await get(alice, `type=0&job_id=${jobId}&output=0&intervals=1`)).envelope.data[0])).toEqual(header);
    expect((await get(alice, `type=0&job_id=${jobId}&output=1&intervals=1&insight=2&estimate=sales_hi95`)).envelope.data[0].sales).toBe('170');
    expect((await get(alice, `type=0&job_id=${jobId}&output=1&insight=2&estimate=sales_hi95`)).envelope.data).toBe(
      "Invalid parameter 'estimate': 'sales_hi95' is not a column of the data (columns: year, month, day, store, price, sales)",
    );
    expect((await get(alice, `type=0&job_id=${jobId}&output=1&intervals=2`)).envelope.status).toBe(1);

    // Column listings and the output summary show the legacy columns only.
    expect((await get(alice, `type=1&job_id=${jobId}&output=1`)).envelope.data.map((c: { name: string }) => c.name)).toEqual(header);
    const zdao = await ctx.request({ method: 'GET', url: `${CURRENT}/zdao.php?session=${alice.session}&job_id=${jobId}` });
    expect(zdao.envelope.data).toBe(`Output ${outputId} of job ${jobId}: 2 rows, 6 columns`);

    // PUT /data period copies the bounds with the rows it moves ahead.
    const moved = await ctx.request({ method: 'PUT', url: `${CURRENT}/data.php`, ...form({ session: alice.session, job_id: jobId, output: 1, period: 'P1D' }) });
    expect(moved.envelope.status).toBe(0);
    const after = (await get(alice, `type=0&job_id=${jobId}&output=1&intervals=1`)).envelope.data as Record<string, string>[];
    expect(after.map((r) => r.day)).toEqual(['3', '4']);
    expect(after.map((r) => r.sales_hi95)).toEqual(['162', '172']);

    // Dropping the forecast column drops its bounds too.
    const dropped = await ctx.request({ method: 'PUT', url: `${CURRENT}/data.php`, ...form({ session: alice.session, job_id: jobId, output: 1, sales: 'ignore' }) });
    expect(dropped.envelope).toEqual({ status: 0, data: 'success' });
    expect(Object.keys((await get(alice, `type=0&job_id=${jobId}&output=1&intervals=1`)).envelope.data[0])).toEqual(['year', 'month', 'day', 'store', 'price']);
  });
});

describe('for the training engine', () => {
  it('reads the training set and deletes a job data', async () => {
    const jobId = await jobWithSales();
    const set = await ctx.services.data.readTrainingSet(jobId);
    expect(set.header).toEqual(['year', 'month', 'day', 'store', 'price', 'sales']);
    expect(set.columns[3]).toEqual({ name: 'store', role: 'input', kind: 'categorical' });
    expect(set.columns[0]).toEqual({ name: 'year', role: 'date', kind: 'numeric', datePart: 'year' });
    expect(set.rows[3]).toEqual(['2021', '2', '2', 'B', '12', '']);
    await withOutput(jobId);
    await ctx.services.data.deleteForJob(jobId);
    expect(await datasetCount(jobId)).toBe(0);
    expect((await get(alice, `job_id=${jobId}&progress=1`)).envelope.data).toEqual([{ count: '0' }]);
  });
});
