/**
 * Load: LOAD_CLIENTS (100) simulated legacy front ends against the real service (its own process,
 * WORKERS=2, a fresh Postgres database) while two long jobs train in that process. Each front end
 * logs in once at the start, then loops: list subscriptions, list jobs, poll a job's progress, read the
 * forecast rows of a finished job. Phases, all in the same run and under the same training load:
 *   front ends   LOAD_SECONDS (60), each front end paced at LOAD_RATE loops/s (1; 0 = unpaced)
 *   saturation   LOAD_CEILING_SECONDS (10), the same loop unpaced: the service's capacity
 *   ceiling      LOAD_CEILING_SECONDS, bare Fastify answering a static envelope (bench/sessions/server.ts)
 *   no training  LOAD_IDLE_SECONDS (20), the front ends again with the training jobs aborted: what
 *                training costs the requests, within the same run rather than in another one
 * Errors are transport errors, non-2xx replies, and envelopes with status other than 0.
 * Target: zero errors and p99 under 50 ms in the front-end phase.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { Client, CURRENT, OLDER, TZ, jobRecord, newJob, seriesCsv, sleep, startApi, upload, waitFor, type ServiceProcess } from '../../test/faults/support.js';
import { freshDatabase, startTarget, stop } from '../support.js';
import { cpuMeter, machineBusyBefore, type CpuUse } from './cpu.js';

const setting = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0`);
  return value;
};
const SECONDS = setting('LOAD_SECONDS', 60);
const CLIENTS = setting('LOAD_CLIENTS', 100);
const LOOPS_PER_SECOND = setting('LOAD_RATE', 1);
const ACCOUNTS = Math.max(1, Math.min(CLIENTS, setting('LOAD_ACCOUNTS', 10)));
const CEILING_SECONDS = setting('LOAD_CEILING_SECONDS', 10);
const TRAINING_ROWS = setting('LOAD_TRAINING_ROWS', 6000);
const TRAINING_JOBS = setting('LOAD_TRAINING_JOBS', 2);
const IDLE_SECONDS = setting('LOAD_IDLE_SECONDS', 20);
const PASSWORD = 'Load-Passw0rd';
const LOGIN_CONCURRENCY = 4;
/** Envelope with status 0, the only reply a front end takes as success. */
const SUCCESS = /^\{"status":"?0"?,/;

interface FrontEnd {
  account: number;
  session: string;
  finishedJob: number;
}

interface PhaseResult {
  name: string;
  seconds: number;
  rps: number;
  requests: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: { transport: number; non2xx: number; envelope: number; samples: string[] };
  cpu: CpuUse;
  /** Sampled every second during the phase (see keepTraining). */
  samples: ReturnType<ReturnType<typeof keepTraining>['since']>;
  /** Server-side time by resource (the service's own histogram): requests and share over 50 ms. */
  server?: Record<string, { requests: number; over50ms: number; meanMs: number }>;
}

// ---------- setup ----------

async function newAccount(baseUrl: string, n: number) {
  const email = `load-${n}-${Date.now().toString(36)}@load.example`;
  const client = new Client(baseUrl);
  await client.ok('POST', 'users', { name: `Load${n}`, lastname: 'FrontEnd', email, password: PASSWORD, phonenumber: '600000000' });
  await client.login(email, PASSWORD);
  await client.ok('POST', 'subscriptions', { app: 'forecast' }, { version: OLDER });
  return { email, client };
}

/** Uploads the CSV to the job (which queues it for training); answers the job id. */
async function stored(client: Client, jobId: number, csv: string): Promise<number> {
  const reply = await upload(client, jobId, csv);
  if (Number(reply.envelope.status) !== 0) throw new Error(`upload to job ${jobId} failed: ${JSON.stringify(reply.envelope.data)}`);
  return jobId;
}

async function untilStatus(client: Client, jobId: number, statuses: string[], timeoutMs: number) {
  return waitFor(`job ${jobId} in status ${statuses.join('/')}`, async () => {
    const status = (await jobRecord(client, jobId)).Status!;
    if (status === '4' || status === '5') throw new Error(`job ${jobId} ended in status ${status}`);
    return statuses.includes(status) ? status : undefined;
  }, timeoutMs, 250);
}

interface Sample {
  training: number;
  /** The API's event-loop delay over the last second (prom-client resets it at each scrape). */
  loopP99: number;
  loopMax: number;
  /** Round trip of `select 1` from here to the same Postgres: how long a query waits for a core. */
  dbMs: number;
}

/**
 * Samples the service every second (jobs training, event-loop delay, a database round trip) and keeps
 * TRAINING_JOBS jobs training with one more queued: a 6,000-row job of the engine's default budget
 * trains in 8-20 s here, far shorter than the phases. Each asks for the deepest network
 * (LayersRequested 5) through its own App record.
 */
function keepTraining(api: ServiceProcess, databaseUrl: string, owners: Client[], current: Map<number, number>) {
  const samples: Sample[] = [];
  const jobs: { client: Client; jobId: number }[] = [];
  let training = TRAINING_JOBS > 0;
  let stopped = false;
  let created = 0;
  let failure: Error | undefined;
  const probe = new pg.Client({ connectionString: databaseUrl });
  const loop = (async () => {
    await probe.connect();
    while (!stopped) {
      const metrics = await scrape(api);
      const t0 = performance.now();
      await probe.query('select 1');
      const dbMs = performance.now() - t0;
      const running = jobsIn(metrics, 2);
      samples.push({ training: running, loopP99: gauge(metrics, 'nodejs_eventloop_lag_p99_seconds') * 1000, loopMax: gauge(metrics, 'nodejs_eventloop_lag_max_seconds') * 1000, dbMs });
      if (training && running + jobsIn(metrics, 1) < TRAINING_JOBS + 1) {
        const owner = created++ % owners.length;
        const client = owners[owner]!;
        const jobId = await newJob(client);
        await client.ok('POST', 'app', { app_id: 'forecast', simple: 1, fields: 'Job_Id,LayersRequested', params: `${jobId},5` });
        await stored(client, jobId, seriesCsv(TRAINING_ROWS, 0, 100 + created));
        current.set(owner, jobId);
        jobs.push({ client, jobId });
      }
      await sleep(1000);
    }
  })()
    .catch((error: unknown) => void (failure = error instanceof Error ? error : new Error(String(error))))
    .finally(() => probe.end().catch(() => undefined));
  return {
    created: () => created,
    mark: () => samples.length,
    /** What the samples since a mark say: jobs training (fewest, mean), event-loop delay, database round trip. */
    since(mark: number) {
      const window = samples.slice(mark);
      const most = (f: (s: Sample) => number) => Math.max(0, ...window.map(f));
      const dbMs = window.map((s) => s.dbMs).sort((a, b) => a - b);
      return {
        trainingMin: window.length ? Math.min(...window.map((s) => s.training)) : 0,
        trainingMean: window.length ? window.reduce((a, s) => a + s.training, 0) / window.length : 0,
        loopP99Max: most((s) => s.loopP99),
        loopMax: most((s) => s.loopMax),
        dbMsMedian: dbMs[Math.floor(dbMs.length / 2)] ?? 0,
        dbMsMax: dbMs.at(-1) ?? 0,
      };
    },
    async stop() {
      stopped = true;
      await loop;
      if (failure) throw failure;
    },
    /** Stops creating jobs, aborts those still queued or training, and waits until nothing trains. */
    async stopTraining() {
      training = false;
      // Finished jobs refuse the abort: that is fine, only the pending and running ones matter.
      await Promise.all(jobs.map((j) => j.client.call('POST', 'job_aborts', { job_id: j.jobId })));
      await waitFor('no job training', async () => (jobsIn(await scrape(api), 2) === 0 ? true : undefined), 30_000, 250);
    },
  };
}

async function setUp(api: ServiceProcess, databaseUrl: string) {
  const started = Date.now();
  const accounts = await Promise.all(Array.from({ length: ACCOUNTS }, (_, n) => newAccount(api.baseUrl, n)));
  // One small finished job per account, whose forecast rows the front ends read.
  const finished = await Promise.all(accounts.map(async (a, n) => stored(a.client, await newJob(a.client), seriesCsv(60, 3, n + 1))));
  await Promise.all(accounts.map((a, n) => untilStatus(a.client, finished[n]!, ['3'], 180_000)));

  // Every front end logs in once. Logins are scrypt-bound on purpose (N=2^17, ~0.3 s of a core each):
  // 100 at once would queue for tens of seconds, so they arrive LOGIN_CONCURRENCY at a time.
  const loginMs: number[] = [];
  const frontEnds: FrontEnd[] = new Array<FrontEnd>(CLIENTS);
  let nextLogin = 0;
  const loginStarted = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(LOGIN_CONCURRENCY, CLIENTS) }, async () => {
      for (let i = nextLogin++; i < CLIENTS; i = nextLogin++) {
        const account = i % ACCOUNTS;
        const client = new Client(api.baseUrl);
        const t0 = performance.now();
        await client.login(accounts[account]!.email, PASSWORD);
        loginMs.push(performance.now() - t0);
        frontEnds[i] = { account, session: client.session!, finishedJob: finished[account]! };
      }
    }),
  );
  const loginSeconds = (performance.now() - loginStarted) / 1000;
  loginMs.sort((a, b) => a - b);

  // The training jobs' owners' front ends poll the progress of their newest training job.
  const training = new Map<number, number>();
  const keeper = keepTraining(api, databaseUrl, accounts.slice(0, Math.max(1, TRAINING_JOBS)).map((a) => a.client), training);
  if (TRAINING_JOBS > 0) await waitFor(`${TRAINING_JOBS} jobs training`, async () => (jobsIn(await scrape(api), 2) >= TRAINING_JOBS ? true : undefined), 120_000, 250);
  const progressJob = (fe: FrontEnd) => training.get(fe.account) ?? fe.finishedJob;
  return {
    frontEnds,
    progressJob,
    keeper,
    setupSeconds: (Date.now() - started) / 1000,
    logins: { count: loginMs.length, seconds: loginSeconds, p50: loginMs[Math.floor(loginMs.length / 2)]!, max: loginMs.at(-1)! },
  };
}

// ---------- measuring ----------

async function scrape(api: ServiceProcess): Promise<string> {
  return (await fetch(`${api.baseUrl}/metrics`)).text();
}

function gauge(metrics: string, name: string): number {
  return Number(new RegExp(`^${name} ([\\d.e+-]+)`, 'm').exec(metrics)?.[1] ?? 0);
}

/** Jobs in one status, from the service's gauge (refreshed from the database at each scrape). */
function jobsIn(metrics: string, status: number): number {
  return Number(new RegExp(`^mtcs_jobs\\{status="${status}"\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
}

/** Cumulative per resource, from the latency histogram: requests, those at or under 50 ms, seconds in all. */
function serverBuckets(metrics: string): Map<string, { total: number; fast: number; seconds: number }> {
  const out = new Map<string, { total: number; fast: number; seconds: number }>();
  for (const match of metrics.matchAll(/^mtcs_http_request_duration_seconds_(bucket|sum)\{([^}]*)\} ([\d.e+-]+)/gm)) {
    const labels = Object.fromEntries([...match[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    if (labels.method !== 'GET' || labels.version !== CURRENT.slice(5)) continue;
    const entry = out.get(labels.resource!) ?? { total: 0, fast: 0, seconds: 0 };
    if (match[1] === 'sum') entry.seconds = Number(match[3]);
    else if (labels.le === '+Inf') entry.total = Number(match[3]);
    else if (labels.le === '0.05') entry.fast = Number(match[3]);
    out.set(labels.resource!, entry);
  }
  return out;
}

function frontEndRequests(frontEnds: FrontEnd[], progressJob: (fe: FrontEnd) => number, errors: PhaseResult['errors']): autocannon.Request[] {
  let next = 0;
  const onResponse = (status: number, body: string) => {
    if (status === 200 && !SUCCESS.test(body)) {
      errors.envelope++;
      if (errors.samples.length < 5) errors.samples.push(body.slice(0, 200));
    }
  };
  const query = (fe: FrontEnd, extra: string) => `session=${fe.session}&tz=${encodeURIComponent(TZ)}${extra}`;
  const step = (path: (fe: FrontEnd) => string): autocannon.Request => ({
    method: 'GET',
    setupRequest: (request, context: { fe?: FrontEnd }) => {
      // autocannon resets the context at each loop: each loop takes the next front end's session.
      context.fe ??= frontEnds[next++ % frontEnds.length]!;
      return { ...request, path: path(context.fe) };
    },
    onResponse,
  });
  return [
    step((fe) => `${CURRENT}/subscriptions.php?${query(fe, '')}`),
    step((fe) => `${CURRENT}/jobs.php?${query(fe, '&job_id=0')}`),
    step((fe) => `${CURRENT}/jobs_progress.php?${query(fe, `&job_id=${progressJob(fe)}`)}`),
    step((fe) => `${CURRENT}/data.php?${query(fe, `&job_id=${fe.finishedJob}&output=1`)}`),
  ];
}

/** What a phase needs from its load generator (autocannon's result has this shape). */
interface DriveResult {
  duration: number;
  errors: number;
  non2xx: number;
  requests: { average: number; total: number };
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
}

/**
 * Paced front ends: each of the N front ends runs its loop (4 sequential GETs) `loopsPerSecond`
 * times a second, its start offset by i/N of the period. autocannon's `connectionRate` fires all
 * connections at the same instant, so its paced latencies measured the generator's bursts (100
 * requests queued at once every second) rather than the service; real front ends are not in step.
 */
async function paceFrontEnds(
  baseUrl: string,
  frontEnds: FrontEnd[],
  progressJob: (fe: FrontEnd) => number,
  loopsPerSecond: number,
  seconds: number,
  errors: PhaseResult['errors'],
): Promise<DriveResult> {
  const period = 1000 / loopsPerSecond;
  const latencies: number[] = [];
  const start = performance.now() + 50;
  const end = start + seconds * 1000;
  const query = (fe: FrontEnd, extra: string) => `session=${fe.session}&tz=${encodeURIComponent(TZ)}${extra}`;
  const paths = (fe: FrontEnd) => [
    `${CURRENT}/subscriptions.php?${query(fe, '')}`,
    `${CURRENT}/jobs.php?${query(fe, '&job_id=0')}`,
    `${CURRENT}/jobs_progress.php?${query(fe, `&job_id=${progressJob(fe)}`)}`,
    `${CURRENT}/data.php?${query(fe, `&job_id=${fe.finishedJob}&output=1`)}`,
  ];
  let non2xx = 0;
  let transport = 0;
  const clients = Array.from({ length: CLIENTS }, (_, i) => frontEnds[i % frontEnds.length]!);
  await Promise.all(
    clients.map(async (fe, i) => {
      for (let at = start + (i / clients.length) * period; at < end; at += period) {
        const wait = at - performance.now();
        if (wait > 0) await sleep(wait);
        for (const path of paths(fe)) {
          const t0 = performance.now();
          try {
            const res = await fetch(`${baseUrl}${path}`);
            const body = await res.text();
            latencies.push(performance.now() - t0);
            if (res.status < 200 || res.status > 299) non2xx++;
            else if (!SUCCESS.test(body)) {
              errors.envelope++;
              if (errors.samples.length < 5) errors.samples.push(body.slice(0, 200));
            }
          } catch {
            transport++;
          }
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  const mean = latencies.reduce((sum, v) => sum + v, 0) / Math.max(1, latencies.length);
  return {
    duration: seconds,
    errors: transport,
    non2xx,
    requests: { average: latencies.length / seconds, total: latencies.length },
    latency: { mean, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: Math.round(latencies[latencies.length - 1] ?? 0) },
  };
}

async function phase(
  name: string,
  api: ServiceProcess,
  keeper: ReturnType<typeof keepTraining>,
  target: {
    url: string;
    seconds: number;
    requests?: (errors: PhaseResult['errors']) => autocannon.Request[];
    /** A paced driver replaces autocannon (see paceFrontEnds). */
    paced?: (seconds: number, errors: PhaseResult['errors']) => Promise<DriveResult>;
  },
  withServerTimes = false,
): Promise<PhaseResult> {
  const errors: PhaseResult['errors'] = { transport: 0, non2xx: 0, envelope: 0, samples: [] };
  const before = await scrape(api);
  const mark = keeper.mark();
  const meter = cpuMeter(api.pid);
  const result: DriveResult = target.paced
    ? await target.paced(target.seconds, errors)
    : await autocannon({
        url: target.url,
        connections: CLIENTS,
        duration: target.seconds,
        ...(target.requests ? { requests: target.requests(errors) } : {}),
      });
  const cpu = meter();
  const after = await scrape(api);
  errors.transport = result.errors;
  errors.non2xx = result.non2xx;
  let server: PhaseResult['server'];
  if (withServerTimes) {
    const start = serverBuckets(before);
    server = {};
    for (const [resource, end] of serverBuckets(after)) {
      const s = start.get(resource) ?? { total: 0, fast: 0, seconds: 0 };
      const requests = end.total - s.total;
      if (requests > 0) server[resource] = { requests, over50ms: (requests - (end.fast - s.fast)) / requests, meanMs: ((end.seconds - s.seconds) / requests) * 1000 };
    }
  }
  return {
    name,
    seconds: result.duration,
    rps: result.requests.average,
    requests: result.requests.total,
    mean: result.latency.mean,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    errors,
    cpu,
    samples: keeper.since(mark),
    server,
  };
}

function report(results: PhaseResult[], setup: Awaited<ReturnType<typeof setUp>>, busyBefore: number) {
  const line = (r: PhaseResult) =>
    `${r.name.padEnd(44)} ${r.rps.toFixed(0).padStart(7)} req/s  mean ${r.mean.toFixed(0).padStart(4)} ms  p50 ${String(r.p50).padStart(4)} ms  p90 ${String(r.p90).padStart(4)} ms  p99 ${String(r.p99).padStart(4)} ms  max ${String(r.max).padStart(5)} ms  ` +
    `errors ${r.errors.transport + r.errors.non2xx + r.errors.envelope} (transport ${r.errors.transport}, non-2xx ${r.errors.non2xx}, envelope ${r.errors.envelope})`;
  const cpu = (r: PhaseResult) =>
    `   cpu % of one core (${r.cpu.cores} cores): machine ${r.cpu.machine}, api event loop ${r.cpu.apiEventLoop}, api other threads (training) ${r.cpu.apiOtherThreads}, ` +
    `postgres ${r.cpu.postgres}, generator ${r.cpu.generator}, everything else ${r.cpu.machine - r.cpu.apiEventLoop - r.cpu.apiOtherThreads - r.cpu.postgres - r.cpu.generator}; ` +
    `jobs training: min ${r.samples.trainingMin}, mean ${r.samples.trainingMean.toFixed(1)}\n` +
    `   api event-loop delay: worst 1-s p99 ${r.samples.loopP99Max.toFixed(0)} ms, max ${r.samples.loopMax.toFixed(0)} ms; ` +
    `database round trip (select 1): median ${r.samples.dbMsMedian.toFixed(1)} ms, max ${r.samples.dbMsMax.toFixed(1)} ms`;
  console.log(`\nLoad: ${CLIENTS} front ends (${ACCOUNTS} accounts), loop = subscriptions, jobs, jobs_progress, data output=1`);
  const busy = `machine busy before the run: ${(busyBefore * 100).toFixed(0)} % of one core`;
  console.log(busyBefore > 0.2 ? `${busy}: other work shares the cores, figures are not representative of an idle machine` : busy);
  console.log(
    `setup ${setup.setupSeconds.toFixed(0)} s; ${setup.logins.count} logins, ${LOGIN_CONCURRENCY} at a time, in ${setup.logins.seconds.toFixed(1)} s: ` +
      `p50 ${setup.logins.p50.toFixed(0)} ms, max ${setup.logins.max.toFixed(0)} ms (scrypt, by design)`,
  );
  for (const r of results) {
    console.log(line(r));
    console.log(cpu(r));
    for (const [resource, s] of Object.entries(r.server ?? {})) {
      console.log(`   server-side ${resource.padEnd(16)} ${String(s.requests).padStart(7)} requests, mean ${s.meanMs.toFixed(1)} ms, ${(s.over50ms * 100).toFixed(2)} % over 50 ms`);
    }
    for (const sample of r.errors.samples) console.log(`   error sample: ${sample}`);
  }
  const saturation = results.find((r) => r.name.startsWith('saturation'));
  const ceiling = results.find((r) => r.name.startsWith('ceiling'));
  if (saturation && ceiling) console.log(`ours (saturation) / bare Fastify ceiling = ${(saturation.rps / ceiling.rps).toFixed(3)}`);
  const main = results[0]!;
  const errors = main.errors.transport + main.errors.non2xx + main.errors.envelope;
  console.log(`target (front ends): zero errors -> ${errors === 0 ? 'met' : 'MISSED'}; p99 < 50 ms -> ${main.p99 < 50 ? 'met' : 'MISSED'}`);
}

export async function benchLoad() {
  const busyBefore = await machineBusyBefore(3000);
  const db = await freshDatabase('bench_load');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mtcs-bench-load-'));
  const results: PhaseResult[] = [];
  let api: ServiceProcess | undefined;
  try {
    api = await startApi({ databaseUrl: db.url, env: { WORKERS: '2', DATA_DIR: dataDir } });
    const setup = await setUp(api, db.url);
    const { keeper } = setup;
    try {
      const baseUrl = api.baseUrl;
      const frontEnds = { url: baseUrl, requests: (errors: PhaseResult['errors']) => frontEndRequests(setup.frontEnds, setup.progressJob, errors) };
      const pacedFrontEnds = {
        url: baseUrl,
        ...(LOOPS_PER_SECOND > 0
          ? { paced: (seconds: number, errors: PhaseResult['errors']) => paceFrontEnds(baseUrl, setup.frontEnds, setup.progressJob, LOOPS_PER_SECOND, seconds, errors) }
          : { requests: frontEnds.requests }),
      };
      await phase('warm-up', api, keeper, { ...pacedFrontEnds, seconds: 3 });
      const paced = LOOPS_PER_SECOND ? `${LOOPS_PER_SECOND} loop/s each, staggered` : 'unpaced';
      results.push(await phase(`front ends (${paced})`, api, keeper, { ...pacedFrontEnds, seconds: SECONDS }, true));
      if (CEILING_SECONDS > 0) {
        results.push(await phase('saturation (same loop, unpaced)', api, keeper, { ...frontEnds, seconds: CEILING_SECONDS }));
        const ceiling = await startTarget('bench/sessions/server.ts', ['static', db.url]);
        try {
          results.push(await phase('ceiling (bare Fastify, static)', api, keeper, { url: `http://127.0.0.1:${ceiling.port}/sessions.php`, seconds: CEILING_SECONDS }));
        } finally {
          await stop(ceiling.child);
        }
      }
      if (IDLE_SECONDS > 0 && TRAINING_JOBS > 0) {
        await keeper.stopTraining();
        results.push(await phase(`front ends, no training (${paced})`, api, keeper, { ...pacedFrontEnds, seconds: IDLE_SECONDS }, true));
      }
    } finally {
      await keeper.stop();
    }
    report(results, setup, busyBefore);
    console.log(`training jobs created by the keeper: ${keeper.created()}`);
    await mkdir('bench/.out', { recursive: true });
    await writeFile('bench/.out/load.json', JSON.stringify({ at: new Date().toISOString(), clients: CLIENTS, accounts: ACCOUNTS, loopsPerSecond: LOOPS_PER_SECOND, machineBusyBefore: busyBefore, setupSeconds: setup.setupSeconds, logins: setup.logins, results }, null, 2));
    return results;
  } finally {
    await api?.stop();
    await sleep(200);
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchLoad();
}
