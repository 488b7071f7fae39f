import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, killAll, newConsumer, newJob, seriesCsv, startApi, startWorker, upload, waitFor, type Client, type FaultDatabase, type ServiceProcess } from './support.js';

/**
 * Scale-out: two API-only processes (WORKERS=0) and two worker-only processes on one Postgres.
 * Every request may go to either API (they keep no state of their own), and the Postgres queue hands
 * each job to exactly one worker.
 */
const JOBS = 50;
const SESSION_CHECKS = 200;
const CONSUMERS = 5;

let db: FaultDatabase;
let apis: ServiceProcess[];
let workers: ServiceProcess[];

beforeAll(async () => {
  db = await createDatabase();
  // All four start together: the migrations' advisory lock lets exactly one of them apply each file.
  const started = await Promise.all([
    startApi({ databaseUrl: db.url }),
    startApi({ databaseUrl: db.url }),
    startWorker({ databaseUrl: db.url }),
    startWorker({ databaseUrl: db.url }),
  ]);
  apis = started.slice(0, 2);
  workers = started.slice(2);
});

afterAll(async () => {
  await killAll();
  await db?.drop();
});

describe('two API processes and two workers on one Postgres', () => {
  it(`runs ${JOBS} jobs exactly once each and answers ${SESSION_CHECKS} concurrent session checks without a failure`, async () => {
    const apiOf = (i: number) => apis[i % 2]!.baseUrl;
    // Each consumer registers on one API and works through both.
    const consumers: Client[] = await Promise.all(Array.from({ length: CONSUMERS }, (_, i) => newConsumer(apiOf(i))));
    const failures: string[] = [];

    // Jobs are created through one API and their data uploaded through the other.
    const jobs = await Promise.all(
      Array.from({ length: JOBS }, async (_, i) => {
        const owner = consumers[i % CONSUMERS]!;
        const jobId = await newJob(owner.on(apiOf(i)));
        const reply = await upload(owner.on(apiOf(i + 1)), jobId, seriesCsv(40, 2, i + 1));
        if (reply.http !== 200 || reply.envelope.status !== 0) failures.push(`upload of job ${jobId}: ${JSON.stringify(reply.envelope)}`);
        return { jobId, owner };
      }),
    );

    // Meanwhile the workers train: 200 session checks at once, spread over both APIs.
    const checks = await Promise.all(
      Array.from({ length: SESSION_CHECKS }, async (_, i) => {
        const consumer = consumers[i % CONSUMERS]!;
        try {
          const reply = await consumer.on(apiOf(i)).call('GET', 'sessions', {}, { timeoutMs: 20_000 });
          return reply.http === 200 && reply.envelope.status === 0 && reply.envelope.data.hash === consumer.session ? 'ok' : JSON.stringify(reply);
        } catch (error) {
          return String(error);
        }
      }),
    );
    failures.push(...checks.filter((c) => c !== 'ok'));
    expect(failures).toEqual([]);

    // Every job reaches Finished, polled through both APIs.
    await waitFor(
      `all ${JOBS} jobs to finish`,
      async () => {
        const statuses = await Promise.all(consumers.map((c, i) => c.on(apiOf(i)).ok('GET', 'jobs', { job_id: 0 })));
        const mine = statuses.flat() as { Status: string }[];
        expect(mine.filter((j) => j.Status === '4' || j.Status === '5')).toEqual([]);
        return mine.length === JOBS && mine.every((j) => j.Status === '3') ? true : undefined;
      },
      150_000,
      500,
    );

    // The runner writes its record, consumption and log line just after the job reads Finished.
    await waitFor(`${JOBS} finish log lines`, async () => {
      const [row] = await db.query<{ n: number }>(`select count(*)::int as n from logs where procedure = 'training.finish'`);
      return row!.n >= JOBS ? true : undefined;
    });

    // Exactly once: one claim per job, one status record (Finished), one consumption record, one log line.
    const rows = await db.query<{ id: number; status: number; attempts: number; stats: number; finished_stats: number; consumptions: number; finish_logs: number }>(
      `select j.id, j.status, j.attempts,
              (select count(*)::int from stat_records s where s.job_id = j.id) as stats,
              (select count(*)::int from stat_records s where s.job_id = j.id and s.status = 1) as finished_stats,
              (select count(*)::int from consumptions c where c.job_id = j.id) as consumptions,
              (select count(*)::int from logs l where l.procedure = 'training.finish' and l.text like 'Job ' || j.id || ' finished %') as finish_logs
         from jobs j order by j.id`,
    );
    expect(rows).toHaveLength(JOBS);
    for (const row of rows) expect(row).toEqual({ id: row.id, status: 3, attempts: 1, stats: 1, finished_stats: 1, consumptions: 1, finish_logs: 1 });

    // The same seen through HTTP by each job's owner, on alternate APIs.
    await Promise.all(
      jobs.map(async ({ jobId, owner }, i) => {
        const stat = await owner.on(apiOf(i)).ok('GET', 'stat', { terminate: 0, job_id: jobId, progress_type: 2 });
        expect(stat, `status records of job ${jobId}`).toHaveLength(1);
      }),
    );
    const consumptions = (await Promise.all(consumers.map((c, i) => c.on(apiOf(i)).ok('GET', 'consumptions')))).flat() as { job_id: number | string }[];
    expect(consumptions.map((c) => Number(c.job_id)).sort((a, b) => a - b)).toEqual(jobs.map((j) => j.jobId).sort((a, b) => a - b));

    // Both workers took part, and the API processes trained nothing.
    const pids = await db.query<{ pid: number; n: number }>('select pid, count(*)::int as n from stat_records group by pid');
    expect(pids.map((p) => p.pid).sort()).toEqual(workers.map((w) => w.pid).sort());
  });
});
