import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, killAll, newConsumer, sleep, startApi, startPrivatePostgres, waitFor, type Client, type PrivatePostgres, type ServiceProcess } from './support.js';

/**
 * The database goes away under a running API process and comes back. A private Postgres server is
 * stopped and started rather than the machine's shared one, which other suites use at the same time.
 */
let server: PrivatePostgres;
let api: ServiceProcess;
let user: Client;

interface Sample {
  at: number;
  ms: number;
  http?: number;
  status?: number;
  data?: unknown;
  failure?: string;
}

beforeAll(async () => {
  server = startPrivatePostgres();
  const db = await createDatabase(server.url);
  await db.pool.end();
  api = await startApi({ databaseUrl: db.url });
  user = await newConsumer(api.baseUrl);
});

afterAll(async () => {
  await killAll();
  server?.destroy();
});

/** `loops` clients checking their session back to back until `stop` resolves. */
async function sessionChecks(loops: number, until: Promise<void>): Promise<Sample[]> {
  const samples: Sample[] = [];
  let done = false;
  void until.then(() => (done = true));
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (!done) {
        const at = Date.now();
        try {
          // A hang would show as this deadline expiring: the reply must come well before it.
          const reply = await user.call('GET', 'sessions', {}, { timeoutMs: 10_000 });
          samples.push({ at, ms: Date.now() - at, http: reply.http, status: Number(reply.envelope.status), data: reply.envelope.data });
        } catch (error) {
          samples.push({ at, ms: Date.now() - at, failure: String(error) });
        }
        await sleep(20);
      }
    }),
  );
  return samples;
}

describe('Postgres restarted while requests flow', () => {
  it('answers an error envelope during the outage and recovers by itself', async () => {
    let finish!: () => void;
    const flowing = sessionChecks(4, new Promise<void>((resolve) => (finish = resolve)));
    await sleep(1000);

    const stoppedAt = Date.now();
    server.stop('fast');
    await sleep(2500);
    // A request that writes fails the same way while the database is down.
    const write = await user.call('POST', 'jobs', {}, { query: { session: user.session!, tz: 'Europe/Madrid', app_name: 'forecast' }, timeoutMs: 10_000 });
    server.start();
    const startedAt = Date.now();
    // Back by itself: no restart of the API process.
    const recoveredAt = await waitFor(
      'a session check to succeed again',
      async () => {
        const reply = await user.call('GET', 'sessions', {}, { timeoutMs: 10_000 });
        return Number(reply.envelope.status) === 0 ? Date.now() : undefined;
      },
      15_000,
      50,
    );
    await sleep(1000);
    finish();
    const samples = await flowing;

    expect(write.http).toBe(200);
    expect(write.envelope).toEqual({ status: 1, data: 'Service unavailable: the database cannot be reached; try again shortly' });
    expect(recoveredAt - startedAt).toBeLessThan(5000);

    // Every request got an answer: HTTP 200, never a 500, a transport failure or a hang.
    expect(samples.filter((s) => s.failure)).toEqual([]);
    expect(samples.filter((s) => s.http !== 200)).toEqual([]);
    expect(Math.max(...samples.map((s) => s.ms))).toBeLessThan(5000);
    const before = samples.filter((s) => s.at + s.ms < stoppedAt);
    const during = samples.filter((s) => s.at > stoppedAt + 200 && s.at + s.ms < startedAt);
    const after = samples.filter((s) => s.at > recoveredAt);
    expect(before.length).toBeGreaterThan(10);
    expect(before.every((s) => s.status === 0)).toBe(true);
    expect(during.length).toBeGreaterThan(10);
    for (const s of during) expect(s).toMatchObject({ status: 1, data: 'Service unavailable: the database cannot be reached; try again shortly' });
    expect(after.length).toBeGreaterThan(10);
    expect(after.every((s) => s.status === 0)).toBe(true);
    // Any failure at all is only the outage's message (no invalid-session or internal error).
    const messages = new Set(samples.filter((s) => s.status !== 0).map((s) => s.data));
    expect([...messages]).toEqual(['Service unavailable: the database cannot be reached; try again shortly']);
    expect(api.child.exitCode).toBeNull();
  });
});
