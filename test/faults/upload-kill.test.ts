import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CURRENT,
  TZ,
  createDatabase,
  jobRecord,
  killAll,
  newConsumer,
  newJob,
  seriesCsv,
  sleep,
  startApi,
  upload,
  waitFor,
  type Client,
  type FaultDatabase,
  type ServiceProcess,
} from './support.js';

let db: FaultDatabase;
const dataDirs = {
  made: [] as string[],
  /** A DATA_DIR that outlives a killed process, so its restart finds the spool files it left. */
  make() {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mtcs-fault-upload-'));
    this.made.push(dir);
    return dir;
  },
};

beforeAll(async () => {
  db = await createDatabase();
});

afterAll(async () => {
  await killAll();
  await db?.drop();
  for (const dir of dataDirs.made) rmSync(dir, { recursive: true, force: true });
});

/**
 * A CSV upload streamed a chunk of rows every few milliseconds: `chunks` of them then the end of the
 * form, or without end until cancelled.
 */
function streamedUpload(session: string, jobId: number, options: { chunks?: number; pauseMs?: number } = {}) {
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
  let sentChunks = 0;
  const sent = { bytes: 0 };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head);
    },
    async pull(controller) {
      if (options.chunks !== undefined && sentChunks >= options.chunks) {
        controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
        controller.close();
        return;
      }
      await sleep(options.pauseMs ?? 10);
      const lines: string[] = [];
      for (let i = 0; i < 2000; i++, row++) lines.push(`${2000 + Math.floor(row / 12)},${(row % 12) + 1},${row % 20},${row % 10},${row % 97}`);
      const chunk = Buffer.from(`${lines.join('\n')}\n`);
      sent.bytes += chunk.length;
      sentChunks++;
      controller.enqueue(chunk);
    },
  });
  return { body, boundary, sent, rows: () => row };
}

function post(api: ServiceProcess, upload: ReturnType<typeof streamedUpload>) {
  return fetch(`${api.baseUrl}${CURRENT}/data.php?tz=${TZ}`, {
    method: 'POST',
    body: upload.body,
    headers: { 'content-type': `multipart/form-data; boundary=${upload.boundary}` },
    duplex: 'half',
  }).then(
    (res) => ({ answered: res.status }),
    (error: unknown) => ({ failed: String(error) }),
  );
}

const spoolOf = (dataDir: string) => {
  const dir = path.join(dataDir, 'spool');
  return existsSync(dir) ? readdirSync(dir) : [];
};

async function nothingLeft(again: Client, jobId: number, dataDir: string) {
  // The session lives in Postgres, so it survives the restart.
  expect((await jobRecord(again, jobId)).Status).toBe('0');
  expect(await again.ok('GET', 'data', { job_id: jobId, output: 0, progress: 1 })).toEqual([{ count: '0' }]);
  expect(await again.ok('GET', 'data', { job_id: jobId, output: 0, progress: 0 })).toEqual([]);
  expect(await db.query('select id from datasets where job_id = $1', [jobId])).toEqual([]);
  const tables = await db.query<{ n: number }>(`select count(*)::int as n from pg_tables where tablename like 'data\\_rows\\_%' or tablename like 'data\\_staging\\_%'`);
  expect(tables[0]!.n).toBe(0);
  // The restart removed the dead process's spool files.
  expect(spoolOf(dataDir)).toEqual([]);

  // The job takes a complete upload afterwards as if nothing had happened.
  const done = await upload(again, jobId, seriesCsv(24, 0));
  expect(done.envelope).toEqual({ status: 0, data: `Data stored for job ${jobId}: 24 rows, 5 columns from 1 file` });
  expect(await again.ok('GET', 'data', { job_id: jobId, output: 0, progress: 1 })).toEqual([{ count: '24' }]);
  expect((await jobRecord(again, jobId)).Status).toBe('1');
  await db.query('delete from datasets where job_id = $1', [jobId]);
}

describe('kill -9 of the API server in the middle of an upload', () => {
  it('while the client sends: nothing of the database is held, and nothing of that upload is left after a restart', async () => {
    const dataDir = dataDirs.make();
    let api: ServiceProcess = await startApi({ databaseUrl: db.url, env: { DATA_DIR: dataDir } });
    const user = await newConsumer(api.baseUrl);
    const jobId = await newJob(user);

    const stream = streamedUpload(user.session!, jobId);
    const request = post(api, stream);

    // The rows go to the spool; the database sees no COPY and no open transaction meanwhile.
    await waitFor('the upload to be spooling', async () => (stream.sent.bytes > 1024 * 1024 && spoolOf(dataDir).length === 1 ? true : undefined), 30_000, 50);
    const busy = await db.query(`select state, query from pg_stat_activity where datname = $1 and (query ilike 'copy%' or state like 'idle in transaction%')`, [db.name]);
    expect(busy).toEqual([]);
    await api.kill9();
    expect(await request).toHaveProperty('failed');
    void stream.body.cancel().catch(() => undefined);
    expect(spoolOf(dataDir)).toHaveLength(1);

    api = await startApi({ databaseUrl: db.url, env: { DATA_DIR: dataDir } });
    await nothingLeft(user.on(api.baseUrl), jobId, dataDir);
    await api.kill9();
  });

  it('while the spooled file is copied into the database: nothing of that upload is left after a restart', async () => {
    const dataDir = dataDirs.make();
    let api: ServiceProcess = await startApi({ databaseUrl: db.url, env: { DATA_DIR: dataDir } });
    const user = await newConsumer(api.baseUrl);
    const jobId = await newJob(user);

    // About 60 MB sent as fast as the socket takes it, then stored: wait for its COPY, then kill.
    const stream = streamedUpload(user.session!, jobId, { chunks: 1200, pauseMs: 0 });
    const request = post(api, stream);
    await waitFor(
      'the upload to be copying rows into Postgres',
      async () => {
        const copying = await db.query(`select 1 from pg_stat_activity where datname = $1 and state = 'active' and query ilike 'copy data_staging_%'`, [db.name]);
        return copying.length > 0 ? true : undefined;
      },
      60_000,
      10,
    );
    await api.kill9();
    expect(await request).toHaveProperty('failed');

    await waitFor('the killed server’s backends to end', async () => {
      const left = await db.query(`select 1 from pg_stat_activity where datname = $1 and query ilike 'copy data_%'`, [db.name]);
      return left.length === 0 ? true : undefined;
    });
    api = await startApi({ databaseUrl: db.url, env: { DATA_DIR: dataDir } });
    await nothingLeft(user.on(api.baseUrl), jobId, dataDir);
  });
});
