import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { industries, industryNames, repeatedIndustries } from '../support/industries.js';
import pg from 'pg';
import { createDatabase, killAll, newConsumer, newJob, sleep, startApi, startPrivatePostgres, startWorker, upload, waitFor, type Client, type FaultDatabase, type ServiceProcess } from './support.js';

/**
 * One job's series spread over two processes on one Postgres: the API with one training thread and
 * a `worker` with one. The panel is vega-datasets' 14 industries, cut into many small parts
 * (TRAINING_PART_UNITS); a short heartbeat bound so a killed worker's part is reclaimed in seconds.
 */
const ENV = { WORKERS: '1', TRAINING_PART_UNITS: '150', JOB_STALE_AFTER_MS: '2000', JOB_RECOVER_EVERY_MS: '300' };
const PANEL = industries(industryNames(), 60, 6).csv;
const LARGE_PANEL = repeatedIndustries(1000, 96, 6);
const ROWS = 14 * 6;

let db: FaultDatabase;
let api: ServiceProcess;
let user: Client;
const workers: ServiceProcess[] = [];
/** The output of the panel trained by the API alone: what every other run must answer. */
let reference: Record<string, string>[];

interface PartRow {
  part: number;
  stage: number;
  status: number;
  worker: string | null;
  attempts: number;
}
const partsOf = (jobId: number) => db.query<PartRow>('select part, stage, status, worker, attempts from job_parts where job_id = $1 order by part', [jobId]);
const statusOf = async (jobId: number) => (await db.query<{ status: number }>('select status from jobs where id = $1', [jobId]))[0]!.status;
const pidOf = (worker: string | null) => (worker ? Number(worker.split(':')[1]) : null);

async function output(jobId: number): Promise<Record<string, string>[]> {
  return (await user.ok('GET', 'data', { job_id: jobId, output: 1, intervals: 1 })) as Record<string, string>[];
}

/** Polls the job until it ends, noting which processes ran its parts; answers the final status and those pids. */
async function follow(jobId: number, onParts?: (parts: PartRow[]) => Promise<void>, timeoutMs = 120_000) {
  const pids = new Set<number>();
  let status = 0;
  await waitFor(
    `job ${jobId} to end`,
    async () => {
      const parts = await partsOf(jobId);
      for (const p of parts) if (p.stage === 2 && p.status > 0 && p.worker) pids.add(pidOf(p.worker) as number);
      await onParts?.(parts);
      status = await statusOf(jobId);
      return status >= 3 ? true : undefined;
    },
    timeoutMs,
    25,
  );
  return { status, pids };
}

async function panelJob(): Promise<number> {
  const jobId = await newJob(user);
  const reply = await upload(user, jobId, PANEL);
  expect(reply.envelope.status, JSON.stringify(reply.envelope)).toBe(0);
  return jobId;
}

beforeAll(async () => {
  db = await createDatabase();
  api = await startApi({ databaseUrl: db.url, env: ENV });
  user = await newConsumer(api.baseUrl);
  // The API alone: the reference output.
  const jobId = await panelJob();
  const { status } = await follow(jobId);
  expect(status).toBe(3);
  reference = await output(jobId);
  expect(reference).toHaveLength(ROWS);
}, 180_000);

afterAll(async () => {
  await killAll();
  await db?.drop();
});

describe('a panel job over two processes', () => {
  it('is shared by the API and a worker, and writes every row once, the same as the API alone', async () => {
    workers.push(await startWorker({ databaseUrl: db.url, env: ENV }));
    const jobId = await panelJob();
    const { status, pids } = await follow(jobId);
    expect(status).toBe(3);
    expect([...pids].sort()).toEqual([api.pid, workers[0]!.pid].sort());
    const rows = await output(jobId);
    expect(new Set(rows.map((r) => `${r.industry} ${r.year}-${r.month}`)).size).toBe(ROWS);
    expect(rows).toEqual(reference);
    expect(await partsOf(jobId)).toEqual([]);
  });

  it('reclaims the part of a worker killed with -9 in the middle of it, three rounds, and loses or repeats nothing', async () => {
    for (let round = 1; round <= 3; round++) {
      const worker = workers.at(-1)!;
      const jobId = await panelJob();
      let killed: number | undefined;
      const { status } = await follow(jobId, async (parts) => {
        const mine = parts.find((p) => p.status === 1 && p.stage === 2 && pidOf(p.worker) === worker.pid);
        if (killed === undefined && mine) {
          killed = mine.part;
          await worker.kill9();
          // A new worker joins; the dead one's part comes back after the heartbeat bound.
          workers.push(await startWorker({ databaseUrl: db.url, env: ENV }));
        }
      });
      expect(killed, `round ${round}: a part ran on worker ${worker.pid}`).toBeDefined();
      expect(status, `round ${round}`).toBe(3);
      const rows = await output(jobId);
      expect(rows, `round ${round}`).toEqual(reference);
      const recovered = await db.query<{ text: string }>(`select text from logs where procedure = 'training.recover' and text = $1`, [`Job ${jobId}: part ${killed} lost its worker and is queued again`]);
      expect(recovered, `round ${round}: the reclaim is logged`).toHaveLength(1);
    }
  });

  it('stops every part of an aborted job within a second, in both processes', async () => {
    if (workers.length === 0) workers.push(await startWorker({ databaseUrl: db.url, env: ENV }));
    const worker = workers.at(-1)!;
    // 1,000 series: the global model's rounds take seconds each, so a part not stopped would still run past the bound.
    const jobId = await newJob(user);
    expect((await upload(user, jobId, LARGE_PANEL)).envelope.status).toBe(0);
    let running: PartRow[] = [];
    await waitFor(
      'parts running in both processes',
      async () => {
        running = (await partsOf(jobId)).filter((p) => p.status === 1);
        const pids = running.map((p) => pidOf(p.worker));
        return pids.includes(api.pid) && pids.includes(worker.pid) ? true : undefined;
      },
      120_000,
      10,
    );
    await user.ok('POST', 'job_aborts', { job_id: jobId });
    expect(await statusOf(jobId)).toBe(5);
    expect(await partsOf(jobId)).toEqual([]);
    // Each process that was running a part says when its thread stopped: within a second of the abort. (A part
    // may end between the last look and the abort; its process has claimed the next part of the job by then.)
    const stops = await waitFor(
      'a stop line from each process',
      async () => {
        const rows = await db.query<{ text: string; after_ms: number }>(
          `select l.text, extract(epoch from (l.created_at - j.finished_at)) * 1000 as after_ms
           from logs l join jobs j on j.id = $1
           where l.procedure = 'training.abort' and l.text like $2`,
          [jobId, `Job ${jobId}: part % stopped on %`],
        );
        const pids = new Set(rows.map((r) => pidOf(/ stopped on (\S+)/.exec(r.text)?.[1] ?? null)));
        return pids.has(api.pid) && pids.has(worker.pid) ? rows : undefined;
      },
      5_000,
      50,
    );
    expect(running.length).toBeGreaterThanOrEqual(2);
    for (const line of stops) expect(Number(line.after_ms), line.text).toBeLessThan(1000);
    const [record] = await db.query<{ status: number; text: string }>('select status, text from stat_records where job_id = $1', [jobId]);
    expect(record).toMatchObject({ status: 3 });
    expect((await user.call('GET', 'data', { job_id: jobId, output: 1 })).envelope.data).not.toHaveLength(ROWS);
  });
});

describe('a Postgres restart in the middle of a job in parts', () => {
  it('finishes the job with every row once, the same as without the restart', async () => {
    const server = startPrivatePostgres();
    try {
      const privateDb = await createDatabase(server.url);
      await privateDb.pool.end();
      const privateApi = await startApi({ databaseUrl: privateDb.url, env: ENV });
      const owner = await newConsumer(privateApi.baseUrl);
      const jobId = await newJob(owner);
      expect((await upload(owner, jobId, PANEL)).envelope.status).toBe(0);
      const admin = new pg.Client({ connectionString: privateDb.url });
      await admin.connect();
      const done = async () => Number((await admin.query(`select count(*) as n from job_parts where job_id = $1 and stage = 2 and status = 2`, [jobId])).rows[0].n);
      await waitFor('a part done', async () => ((await done()) > 0 ? true : undefined), 60_000, 20);
      await admin.end();
      server.stop('immediate');
      await sleep(2000);
      server.start();
      await waitFor(
        `job ${jobId} to finish after the restart`,
        async () => {
          const reply = await owner.call('GET', 'jobs', { job_id: jobId }).catch(() => undefined);
          const status = reply?.envelope.status === 0 ? (reply.envelope.data[0] as { Status: string }).Status : undefined;
          expect(status === '4' || status === '5', `job ended in ${status}`).toBe(false);
          return status === '3' ? true : undefined;
        },
        120_000,
        250,
      );
      const rows = (await owner.ok('GET', 'data', { job_id: jobId, output: 1, intervals: 1 })) as Record<string, string>[];
      expect(rows).toEqual(reference);
    } finally {
      await killAll();
      server.destroy();
    }
  });
});
