import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT, TZ, createDatabase, jobRecord, killAll, newConsumer, newJob, seriesCsv, sleep, startApi, upload, waitFor, type FaultDatabase, type ServiceProcess } from './support.js';

let db: FaultDatabase;

beforeAll(async () => {
  db = await createDatabase();
});

afterAll(async () => {
  await killAll();
  await db?.drop();
});

/** A CSV body that never ends on its own: a chunk of rows every few milliseconds until cancelled. */
function endlessUpload(session: string, jobId: number) {
  const boundary = `----mtcsfault${Date.now()}`;
  const head = Buffer.from(
    [
      `--${boundary}\r\nContent-Disposition: form-data; name="session"\r\n\r\n${session}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="job_id"\r\n\r\n${jobId}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\n1\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="Servicefile"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\n`,
      'year,month,x1,x2,demand\n',
    ].join(''),
  );
  let row = 0;
  const sent = { bytes: 0 };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head);
    },
    async pull(controller) {
      await sleep(10);
      const lines: string[] = [];
      for (let i = 0; i < 2000; i++, row++) lines.push(`${2000 + Math.floor(row / 12)},${(row % 12) + 1},${row % 20},${row % 10},${row % 97}`);
      const chunk = Buffer.from(`${lines.join('\n')}\n`);
      sent.bytes += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { body, boundary, sent };
}

describe('kill -9 of the API server in the middle of an upload', () => {
  it('leaves nothing of that upload behind after a restart', async () => {
    let api: ServiceProcess = await startApi({ databaseUrl: db.url });
    const user = await newConsumer(api.baseUrl);
    const jobId = await newJob(user);

    const { body, boundary, sent } = endlessUpload(user.session!, jobId);
    const request = fetch(`${api.baseUrl}${CURRENT}/data.php?tz=${TZ}`, {
      method: 'POST',
      body,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      duplex: 'half',
    }).then(
      (res) => ({ answered: res.status }),
      (error: unknown) => ({ failed: String(error) }),
    );

    // The rows are flowing into the database: its COPY is running inside the upload's transaction.
    await waitFor(
      'the upload to be copying rows into Postgres',
      async () => {
        const copying = await db.query(`select 1 from pg_stat_activity where datname = $1 and state = 'active' and query ilike 'copy data_rows_%'`, [db.name]);
        return copying.length > 0 && sent.bytes > 1024 * 1024 ? true : undefined;
      },
      30_000,
      50,
    );
    await api.kill9();
    expect(await request).toHaveProperty('failed');
    void body.cancel().catch(() => undefined);

    // The killed server's connection is gone and its transaction with it.
    await waitFor('the killed server’s backends to end', async () => {
      const left = await db.query(`select 1 from pg_stat_activity where datname = $1 and query ilike 'copy data_rows_%'`, [db.name]);
      return left.length === 0 ? true : undefined;
    });

    api = await startApi({ databaseUrl: db.url });
    const again = user.on(api.baseUrl);
    // The session lives in Postgres, so it survives the restart.
    expect((await jobRecord(again, jobId)).Status).toBe('0');
    expect(await again.ok('GET', 'data', { job_id: jobId, output: 0, progress: 1 })).toEqual([{ count: '0' }]);
    expect(await again.ok('GET', 'data', { job_id: jobId, output: 0, progress: 0 })).toEqual([]);
    expect(await db.query('select id from datasets where job_id = $1', [jobId])).toEqual([]);
    const tables = await db.query<{ n: number }>(`select count(*)::int as n from pg_tables where tablename like 'data_rows_%'`);
    expect(tables[0]!.n).toBe(0);

    // The job takes a complete upload afterwards as if nothing had happened.
    const done = await upload(again, jobId, seriesCsv(24, 0));
    expect(done.envelope).toEqual({ status: 0, data: `Data stored for job ${jobId}: 24 rows, 5 columns from 1 file` });
    expect(await again.ok('GET', 'data', { job_id: jobId, output: 0, progress: 1 })).toEqual([{ count: '24' }]);
    expect((await jobRecord(again, jobId)).Status).toBe('1');
  });
});
