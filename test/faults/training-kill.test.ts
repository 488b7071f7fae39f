import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  startApi,
  startWorker,
  upload,
  waitFor,
  type FaultDatabase,
  type ServiceProcess,
} from './support.js';

/** A short stale timeout so a dead worker's job is noticed in seconds, not the default 30 s. */
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
  it('re-queues the orphaned job once; another worker trains it to Finished', async () => {
    const jobId = await newJob(user);
    expect((await upload(user, jobId, TRAINING_CSV)).envelope.status).toBe(0);
    const first = await workerTraining(jobId);
    await first.kill9();
    // Nobody beats for it now, but it is not lost: it reads Running until the heartbeat goes stale.
    expect((await jobRow(jobId)).status).toBe(2);

    const second = await startWorker({ databaseUrl: db.url, env: WORKER_ENV });
    workers.push(second);
    const seen = await followUntil(jobId, [3, 4]);
    expect(seen[0]).toBe(2);
    expect(seen.at(-1)).toBe(3);
    const row = await jobRow(jobId);
    expect(row).toMatchObject({ status: 3, attempts: 2, error: null, advance: 100 });
    expect(row.worker).toContain(`:${second.pid}:`);
    expect((await jobRecord(user, jobId)).Status).toBe('3');
    expect(await user.ok('GET', 'jobs_progress', { job_id: jobId })).toEqual({ Advance: 100 });
    const output = await user.ok('GET', 'data', { job_id: jobId, output: 1, progress: 1 });
    expect(output).toEqual([{ count: '12' }]);

    // The dead run's status record is closed as Failed, the second run's as Finished; none stays open.
    // (The runner closes its record and logs just after the job reads Finished.)
    await waitFor('the finish log line', async () => ((await db.query(`select 1 from logs where procedure = 'training.finish' and text like $1`, [`Job ${jobId} finished %`])).length === 1 ? true : undefined));
    const records = await statRecords(jobId);
    expect(records.map((r) => [r.pid, r.status])).toEqual([
      [first.pid, 2],
      [second.pid, 1],
    ]);
    expect(records[0]!.text).toMatch(/stopped responding/);
    const logs = await admin.ok('GET', 'logs', { search: `Job ${jobId} was orphaned by a dead worker` });
    expect(logs).toHaveLength(1);
  });

  it('fails the job with the reason when its worker dies a second time; it is never left Running', async () => {
    const jobId = await newJob(user);
    expect((await upload(user, jobId, TRAINING_CSV)).envelope.status).toBe(0);
    // The idle worker of the first test would claim it first: stop it so each run is on a known worker.
    await Promise.all(workers.splice(0).map((w) => w.kill9()));
    await (await workerTraining(jobId)).kill9();
    await (await workerTraining(jobId)).kill9();
    expect((await jobRow(jobId)).attempts).toBe(2);

    const last = await startWorker({ databaseUrl: db.url, env: WORKER_ENV });
    workers.push(last);
    await followUntil(jobId, [3, 4], 20_000);
    const row = await jobRow(jobId);
    expect(row.status).toBe(4);
    expect(row.error).toBe('The worker running this job stopped responding 2 times; giving up');
    expect((await jobRecord(user, jobId)).Status).toBe('4');
    expect((await statRecords(jobId)).map((r) => r.status)).toEqual([2, 2]);
    const logs = await admin.ok('GET', 'logs', { search: `Job ${jobId} failed: its worker died` });
    expect(logs).toHaveLength(1);
    const training = await db.query<{ status: number }>('select t.status from trainings t join jobs j on j.training_id = t.id where j.id = $1', [jobId]);
    expect(training[0]!.status).toBe(3);
  });
});
