/**
 * One job's series in parts, through the API with the runner of this process: a panel cut into
 * parts gives the same output and the same choice across its series as one thread, another user's
 * small job is claimed before the rest of a big job's parts, progress counts parts, and an abort stops the
 * parts and closes the records. Real data:
 * vega-datasets' unemployment by industry. Parts are made small (TRAINING_PART_UNITS of 100) so a 14-series
 * panel is cut into many.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { createTrainingRunner } from '../../src/jobs-runner/wiring.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { refreshJobGauges, type Runtime } from '../../src/runtime.js';
import { forecastJobs, type Row, type Stat } from '../support/forecast-jobs.js';
import { CURRENT, OLDER, createTestContext, form, type TestContext, type TestUser } from '../support/helper.js';
import { unemployedByIndustry } from '../support/driver-series.js';
import { industries, industryNames } from '../support/industries.js';

const TZ = 'UTC';
const ENGINE_TIMEOUT = 240_000;
/** Every industry, `months` months from January 2002, the last `hidden` of each empty. */
const industriesCsv = (months: number, hidden: number) => industries(industryNames(), months, hidden).csv;

/** One series: the first industry alone, a small job. */
function oneSeriesCsv(): string {
  const [header, ...rows] = industriesCsv(48, 6).trim().split('\n');
  const first = (rows[0] as string).split(',')[0];
  return `${[header, ...rows.filter((r) => r.startsWith(`${first},`))].join('\n')}\n`;
}

let ctx: TestContext;
let alice: TestUser;
let bob: TestUser;
const PANEL = industriesCsv(60, 6);

async function subscribe(user: TestUser) {
  const sub = await ctx.request({ method: 'POST', url: `${OLDER}/subscriptions.php?session=${user.session}`, ...form({ app: 'forecast' }) });
  expect(sub.envelope.status).toBe(0);
}

/** A runner of this process with the given part size and threads; stopped by the caller. */
function runner(partUnits: number, threads = 1) {
  const training = createTrainingRunner(ctx.services, { threads, pollMs: 50, heartbeatMs: 100, limits: { maxRows: 100_000, budgetMb: 512, partUnits } });
  training.runner.start();
  return training;
}

const partsOf = async (jobId: number) =>
  ctx.database.db.selectFrom('job_parts').select(['part', 'stage', 'status', 'worker']).where('job_id', '=', jobId).orderBy('part').execute();

const logsOf = async (procedure: string) =>
  (await ctx.database.db.selectFrom('logs').select('text').where('procedure', '=', procedure).execute()).map((r) => r.text);

beforeAll(async () => {
  ctx = await createTestContext();
  alice = await ctx.createUser({ email: 'alice@parts.example' });
  bob = await ctx.createUser({ email: 'bob@parts.example' });
  await subscribe(alice);
  await subscribe(bob);
}, 60_000);

afterAll(async () => {
  await ctx?.close();
});

describe('a panel job in parts', () => {
  let whole: Row[];
  let parted: Row[];
  let wholeSelection: Stat['Selection'];
  let partedSelection: Stat['Selection'];
  let partedJob: number;
  const seen = { parts: 0, rounds: 0, choices: 0, refits: 0, advances: [] as number[], gauges: { queued: 0, running: 0, done: 0 } };

  beforeAll(async () => {
    const jobs = forecastJobs(ctx, alice, TZ, ENGINE_TIMEOUT);
    // One thread, parts too large to cut: the whole panel where it was planned, as when a job ran on one
    // thread only.
    const one = runner(1_000_000);
    const a = await jobs.jobWithData(PANEL);
    await jobs.finished(a.jobId);
    whole = await jobs.output(a.jobId, '&intervals=1');
    wholeSelection = (await jobs.stat(a.jobId)).Selection;
    await one.close();

    // Two threads, small parts: the panel goes through the queue, and /metrics shows its parts.
    const metrics = createMetrics({ defaults: false });
    const app = await buildApp({ config: ctx.config, services: ctx.services, logger: pino({ level: 'silent' }), metrics, beforeScrape: () => refreshJobGauges({ services: ctx.services } as Runtime, metrics) });
    const two = runner(100, 2);
    const b = await jobs.jobWithData(PANEL);
    partedJob = b.jobId;
    for (;;) {
      const parts = await partsOf(b.jobId);
      seen.parts = Math.max(seen.parts, parts.filter((p) => p.stage === 2).length);
      seen.rounds = Math.max(seen.rounds, parts.filter((p) => p.stage === 1).length);
      seen.choices = Math.max(seen.choices, parts.filter((p) => p.stage === 3).length);
      seen.refits = Math.max(seen.refits, parts.filter((p) => p.stage === 4).length);
      seen.advances.push(await jobs.advance(b.jobId));
      const scrape = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      for (const state of ['queued', 'running', 'done'] as const) {
        seen.gauges[state] = Math.max(seen.gauges[state], Number(new RegExp(`^mtcs_job_parts\\{state="${state}"\\} (\\S+)$`, 'm').exec(scrape)?.[1] ?? 0));
      }
      if (['3', '4', '5'].includes(await jobs.jobStatus(b.jobId))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await jobs.finished(b.jobId);
    parted = await jobs.output(b.jobId, '&intervals=1');
    partedSelection = (await jobs.stat(b.jobId)).Selection;
    await two.close();
    await app.close();
  }, ENGINE_TIMEOUT);

  it('was cut into the global rounds, several parts of series scored, one choice and the same parts refitted, shown on /metrics, and its progress moved with them', () => {
    expect(seen.gauges.queued).toBeGreaterThan(0);
    expect(seen.gauges.running).toBeGreaterThan(0);
    expect(seen.gauges.done).toBeGreaterThan(0);
    expect(seen.rounds).toBeGreaterThanOrEqual(2);
    expect(seen.parts).toBeGreaterThanOrEqual(4);
    expect(seen.choices).toBe(1);
    expect(seen.refits).toBe(seen.parts);
    const moving = [...new Set(seen.advances.filter((a) => a > 0 && a < 100))];
    expect(moving.length, `advances seen: ${seen.advances.join(' ')}`).toBeGreaterThanOrEqual(2);
  });

  it('answers the same rows, in the same order, with the same bands as one thread', () => {
    expect(parted).toHaveLength(14 * 6);
    expect(parted).toEqual(whole);
  });

  it('chooses one structure across the 14 series, and reports the same choice as one thread', () => {
    const [output] = partedSelection?.outputs ?? [];
    expect(output?.description).toMatch(/ \(chosen across 14 series\); per series over 14 series: \S+ 14$/);
    expect(Object.values(partedSelection?.panel?.wins ?? {})).toEqual([14]);
    expect(new Set(partedSelection?.panel?.perSeries.map((s) => s.outputs[0]?.chosen)).size).toBe(1);
    expect(partedSelection).toEqual(wholeSelection);
  });

  it('leaves no part behind, and its status record and log say how it ran', async () => {
    expect(await partsOf(partedJob)).toEqual([]);
    expect((await logsOf('training.plan')).some((t) => t.startsWith(`Job ${partedJob} planned`))).toBe(true);
    const stat = await forecastJobs(ctx, alice, TZ, ENGINE_TIMEOUT).stat(partedJob);
    expect(stat.Status).toBe('3');
    expect(stat.Selection?.panel?.series).toBe(14);
  });
});

describe('fair turns between users', () => {
  it("claims another user's small job before the rest of a big job's parts", { timeout: ENGINE_TIMEOUT }, async () => {
    const aliceJobs = forecastJobs(ctx, alice, TZ, ENGINE_TIMEOUT);
    const bobJobs = forecastJobs(ctx, bob, TZ, ENGINE_TIMEOUT);
    const one = runner(60, 1);
    try {
      const big = await aliceJobs.jobWithData(PANEL);
      // Bob uploads once Alice's parts are queued.
      for (;;) {
        if ((await partsOf(big.jobId)).length > 0) break;
        expect(await aliceJobs.jobStatus(big.jobId)).not.toMatch(/[345]/);
        await new Promise((r) => setTimeout(r, 20));
      }
      const small = await bobJobs.jobWithData(oneSeriesCsv());
      await bobJobs.finished(small.jobId);
      const left = (await partsOf(big.jobId)).filter((p) => p.status === 0);
      expect(await aliceJobs.jobStatus(big.jobId)).toBe('2');
      expect(left.length, "Alice's parts still queued when Bob's job finished").toBeGreaterThan(0);
      await aliceJobs.finished(big.jobId);
    } finally {
      await one.close();
    }
  });
});

describe('abort of a job in parts', () => {
  it('stops its parts, removes them and closes its records as Aborted', { timeout: ENGINE_TIMEOUT }, async () => {
    const jobs = forecastJobs(ctx, alice, TZ, ENGINE_TIMEOUT);
    const one = runner(60, 1);
    try {
      const job = await jobs.jobWithData(PANEL);
      for (;;) {
        if ((await partsOf(job.jobId)).some((p) => p.status === 2)) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const abort = await ctx.request({ method: 'POST', url: `${CURRENT}/job_aborts.php`, ...form({ session: alice.session, tz: TZ, job_id: job.jobId }) });
      expect(abort.envelope.status, String(abort.envelope.data)).toBe(0);
      expect(await jobs.jobStatus(job.jobId)).toBe('5');
      expect(await partsOf(job.jobId)).toEqual([]);
      const [record] = await jobs.statusRecords(job.jobId);
      expect(record?.status).toBe('3');
      expect(record?.text).toMatch(/^aborted at \d+%/);
      // Nothing more is written for it: no output appears once the runner has had time to claim again.
      await new Promise((r) => setTimeout(r, 500));
      const output = await ctx.request({ method: 'GET', url: `${CURRENT}/data.php?session=${alice.session}&tz=${TZ}&job_id=${job.jobId}&output=1` });
      expect(output.envelope.status === 1 || (output.envelope.data as Row[]).length === 0, JSON.stringify(output.envelope).slice(0, 200)).toBe(true);
    } finally {
      await one.close();
    }
  });
});

describe('a panel with a known driver in parts', () => {
  it('runs the fixed-effects regression in the global rounds and answers the same rows and choice as one thread', { timeout: 2 * ENGINE_TIMEOUT }, async () => {
    const jobs = forecastJobs(ctx, bob, TZ, ENGINE_TIMEOUT);
    const csv = unemployedByIndustry(2).csv;
    const answer = async (partUnits: number, threads: number) => {
      const training = runner(partUnits, threads);
      try {
        const { jobId } = await jobs.jobWithData(csv);
        await jobs.finished(jobId);
        return { jobId, rows: await jobs.output(jobId, '&intervals=1'), selection: (await jobs.stat(jobId)).Selection };
      } finally {
        await training.close();
      }
    };
    const whole = await answer(1_000_000, 1);
    const parted = await answer(30, 2);
    expect(whole.selection?.outputs[0]?.description).toMatch(/fixed_effects/);
    expect(parted.rows).toEqual(whole.rows);
    expect(parted.selection?.outputs[0]?.description).toBe(whole.selection?.outputs[0]?.description);
    expect(parted.selection?.outputs[0]?.notes).toEqual(whole.selection?.outputs[0]?.notes);
  });
});
