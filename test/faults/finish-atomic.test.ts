import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORING_LOST_TEXT } from '../../src/domain/jobs/job-queue.repository.js';
import { createDatabase, killAll, newConsumer, newJob, seriesCsv, startApi, startWorker, upload, waitFor, type Client, type FaultDatabase, type ServiceProcess } from './support.js';

/**
 * The end of a run is one transaction: a worker killed after it wrote a job's output and before the job
 * reads Finished leaves nothing of that run behind, and the job, still Running at its storing mark, is
 * queued again by recovery and trained to Finished with everything. The kill lands between the two by
 * holding the model table locked: the worker's finish writes the output, then waits on the lock to store
 * the model, and is killed there.
 */
const WORKER_ENV = { JOB_STALE_AFTER_MS: '2000', JOB_RECOVER_EVERY_MS: '300' };

let db: FaultDatabase;
let api: ServiceProcess;
let user: Client;

/** What a run leaves of itself: output datasets, stored models, consumption records, the job's and training's status. */
async function traces(jobId: number) {
  const [row] = await db.query<{ status: number; advance: number; training_status: number; outputs: string; models: string; consumptions: string }>(
    `select j.status, j.advance, t.status as training_status,
       (select count(*) from datasets d where d.job_id = j.id and d.kind = 'output') as outputs,
       (select count(*) from network_weights n where n.training_id = j.training_id and n.kind = 'model') as models,
       (select count(*) from consumptions c where c.job_id = j.id) as consumptions
     from jobs j join trainings t on t.id = j.training_id where j.id = $1`,
    [jobId],
  );
  return { status: row!.status, advance: row!.advance, trainingStatus: row!.training_status, outputs: Number(row!.outputs), models: Number(row!.models), consumptions: Number(row!.consumptions) };
}

beforeAll(async () => {
  db = await createDatabase();
  api = await startApi({ databaseUrl: db.url });
  user = await newConsumer(api.baseUrl);
});

afterAll(async () => {
  await killAll();
  await db?.drop();
});

describe('kill -9 of a worker between the output and the status', () => {
  it('keeps nothing of the run; recovery queues the job again and it ends Finished with its output, model, records and consumption', async () => {
    const jobId = await newJob(user);
    expect((await upload(user, jobId, seriesCsv(400, 12, 3))).envelope.status).toBe(0);

    const locker: pg.PoolClient = await db.pool.connect();
    let first: ServiceProcess | undefined;
    try {
      await locker.query('begin');
      await locker.query('lock table network_weights in exclusive mode');
      first = await startWorker({ databaseUrl: db.url, env: WORKER_ENV });
      // The finish has written the output in its transaction and waits to store the model.
      await waitFor(
        'the finish waiting on the model table',
        async () => {
          const waiting = await db.query(`select 1 from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and query ilike '%network_weights%'`, [db.name]);
          return waiting.length > 0 ? true : undefined;
        },
        60_000,
        50,
      );
      expect(await traces(jobId)).toMatchObject({ status: 2, advance: 100 });
      await first.kill9();
    } finally {
      await locker.query('rollback').catch(() => undefined);
      locker.release();
    }
    // The dead worker's transaction went with its connection: no output, model or consumption, the job still Running.
    await waitFor('the dead worker connection gone', async () => ((await db.query(`select 1 from pg_stat_activity where datname = $1 and query ilike '%network_weights%' and state <> 'idle' and pid <> pg_backend_pid()`, [db.name])).length === 0 ? true : undefined));
    // The training reads Training (1) still, not Trained (2).
    expect(await traces(jobId)).toEqual({ status: 2, advance: 100, trainingStatus: 1, outputs: 0, models: 0, consumptions: 0 });

    // A live worker finds the stale job at its storing mark: queued again, not failed, and trained to the end.
    await startWorker({ databaseUrl: db.url, env: WORKER_ENV });
    await waitFor('the job Finished again', async () => ((await traces(jobId)).status === 3 ? true : undefined), 90_000, 100);
    expect(await traces(jobId)).toEqual({ status: 3, advance: 100, trainingStatus: 2, outputs: 1, models: 1, consumptions: 1 });
    const records = await db.query<{ status: number; text: string; pid: number }>('select status, text, pid from stat_records where job_id = $1 order by id', [jobId]);
    expect(records.map((r) => [r.pid, r.status])).toEqual([
      [first.pid, 3],
      [expect.any(Number), 1],
    ]);
    expect(records[0]!.text).toBe(STORING_LOST_TEXT);
    expect(await db.query(`select 1 from logs where procedure = 'training.recover' and text = $1`, [`Job ${jobId}: ${STORING_LOST_TEXT}`])).toHaveLength(1);
  });
});
