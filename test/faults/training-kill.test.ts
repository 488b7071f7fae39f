import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORPHANED_REASON } from '../../src/domain/jobs/job-queue.repository.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  Client,
  createDatabase,
  jobRecord,
  killAll,
  newConsumer,
  newJob,
  seriesCsv,
  sleep,
  startApi,
  startWorker,
  upload,
  waitFor,
  type FaultDatabase,
  type ServiceProcess,
} from './support.js';

/**
 * A dead worker's job is failed, never re-queued into the next worker (it may be what killed it); a job
 * handed back at SIGTERM is re-queued. A short stale timeout so a dead worker's job is noticed in seconds.
 */
const WORKER_ENV = { JOB_STALE_AFTER_MS: '2000', JOB_RECOVER_EVERY_MS: '300' };
/** Rows enough for a few seconds of training, so there is time to kill the worker in the middle. */
const TRAINING_CSV = seriesCsv(6000, 12, 5);

let db: FaultDatabase;
let api: ServiceProcess;
let user: Client;
let admin: Client;
const workers: ServiceProcess[] = [];

interface JobRow {
  status: number;
  worker: string | null;
  attempts: number;
  advance: number;
  error: string | null;
}
const jobRow = async (jobId: number) => (await db.query<JobRow>('select status, worker, attempts, advance, error from jobs where id = $1', [jobId]))[0]!;

/** Starts a worker process and waits until it is training `jobId` past a few percent. */
async function workerTraining(jobId: number): Promise<ServiceProcess> {
  const worker = await startWorker({ databaseUrl: db.url, env: WORKER_ENV });
  workers.push(worker);
  await waitFor(
    `job ${jobId} running on worker ${worker.pid} past 5%`,
    async () => {
      const row = await jobRow(jobId);
      return row.status === 2 && row.worker?.includes(`:${worker.pid}:`) && row.advance >= 5 ? true : undefined;
    },
    40_000,
    50,
  );
  return worker;
}

/** Samples the job's status until it is one of `final`; answers every status seen on the way. */
async function followUntil(jobId: number, final: number[], timeoutMs = 60_000): Promise<number[]> {
  const seen: number[] = [];
  await waitFor(
    `job ${jobId} to reach status ${final.join(' or ')}`,
    async () => {
      const { status } = await jobRow(jobId);
      if (seen.at(-1) !== status) seen.push(status);
      return final.includes(status) ? true : undefined;
    },
    timeoutMs,
    50,
  );
  return seen;
}

async function statRecords(jobId: number) {
  return db.query<{ status: number; text: string; pid: number }>('select status, text, pid from stat_records where job_id = $1 order by id', [jobId]);
}

beforeAll(async () => {
  db = await createDatabase();
  api = await startApi({ databaseUrl: db.url });
  user = await newConsumer(api.baseUrl);
  admin = new Client(api.baseUrl);
  await admin.login(ADMIN_EMAIL, ADMIN_PASSWORD);
});

afterAll(async () => {
  await killAll();
  await db?.drop();
});

describe('kill -9 of a worker process in the middle of a training', () => {
  it('fails the orphaned job with the reason instead of re-queueing it into another worker; set Pending, it trains again', async () => {
    const jobId = await newJob(user);
    expect((await upload(user, jobId, TRAINING_CSV)).envelope.status).toBe(0);
    const first = await workerTraining(jobId);
    await first.kill9();
    // Nobody beats for it now, but it is not lost: it reads Running until the heartbeat goes stale.
    expect((await jobRow(jobId)).status).toBe(2);

    // A live worker notices the stale heartbeat: the job fails with the reason, it never goes Pending.
    const second = await startWorker({ databaseUrl: db.url, env: WORKER_ENV });
    workers.push(second);
    const seen = await followUntil(jobId, [1, 3, 4]);
    expect(seen).toEqual([2, 4]);
    const row = await jobRow(jobId);
    expect(row).toMatchObject({ status: 4, attempts: 1, error: ORPHANED_REASON });
    expect(row.worker).toContain(`:${first.pid}:`);
    expect((await jobRecord(user, jobId)).Status).toBe('4');
    const training = await db.query<{ status: number }>('select t.status from trainings t join jobs j on j.training_id = t.id where j.id = $1', [jobId]);
    expect(training[0]!.status).toBe(3);
    const records = await statRecords(jobId);
    expect(records.map((r) => [r.pid, r.status])).toEqual([[first.pid, 2]]);
    expect(records[0]!.text).toBe(`failed: ${ORPHANED_REASON}`);
    const logs = await admin.ok('GET', 'logs', { search: `Job ${jobId} failed: Its worker process died` });
    expect(logs).toHaveLength(1);
    // Still Failed a few recovery rounds later: nobody claimed it.
    await sleep(1000);
    expect((await jobRow(jobId)).status).toBe(4);

    // The owner decides to try again: Pending, and the live worker trains it to Finished.
    const [owner] = await db.query<{ training_id: number }>('select training_id from jobs where id = $1', [jobId]);
    await user.ok('PUT', 'jobs', { job_id: jobId, training_id: owner!.training_id, app_name: 'forecast', status: 1 });
    expect(await followUntil(jobId, [3, 4])).toContain(3);
    expect((await jobRow(jobId)).worker).toContain(`:${second.pid}:`);
  });

  it('re-queues a job handed back at a graceful shutdown (SIGTERM); another worker trains it to Finished', async () => {
    const jobId = await newJob(user);
    expect((await upload(user, jobId, TRAINING_CSV)).envelope.status).toBe(0);
    await Promise.all(workers.splice(0).map((w) => w.kill9()));
    const first = await workerTraining(jobId);
    await first.stop();
    expect(await first.exited).toBe(0);
    expect(await jobRow(jobId)).toMatchObject({ status: 1, worker: null, attempts: 0 });

    const second = await startWorker({ databaseUrl: db.url, env: WORKER_ENV });
    workers.push(second);
    expect((await followUntil(jobId, [3, 4])).at(-1)).toBe(3);
    const row = await jobRow(jobId);
    expect(row).toMatchObject({ status: 3, attempts: 1, error: null, advance: 100 });
    expect(row.worker).toContain(`:${second.pid}:`);
    // The handed-back run's record reads Aborted (3), the second run's Finished (1).
    await waitFor('the finish log line', async () => ((await db.query(`select 1 from logs where procedure = 'training.finish' and text like $1`, [`Job ${jobId} finished %`])).length === 1 ? true : undefined));
    expect((await statRecords(jobId)).map((r) => [r.pid, r.status])).toEqual([
      [first.pid, 3],
      [second.pid, 1],
    ]);
  });
});
