/**
 * GET /sessions.php (the session check every front end polls) against, in the same run and on the
 * same Postgres: a bare Fastify static route (ceiling) and a bare Fastify route doing one indexed
 * token-hash lookup with pg (floor). Target: our endpoint at >= 80% of the lookup route's req/s.
 */
import autocannon from 'autocannon';
import { freshDatabase, startTarget, stop } from '../support.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 32;

async function measure(url: string) {
  // A short warm-up lets the JIT and the pool settle before measuring.
  await autocannon({ url, connections: CONNECTIONS, duration: 2 });
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

export async function benchSessions() {
  const db = await freshDatabase('bench_sessions');
  const results: Record<string, { rps: number; p99: number; errors: number }> = {};
  try {
    // Our app first: it migrates the database and creates the user whose session all three look up.
    const app = await startTarget('bench/sessions/server.ts', ['app', db.url]);
    const session = app.extra;
    results.ours = await measure(`http://127.0.0.1:${app.port}/api/202203010900/sessions.php?session=${session}`);
    await stop(app.child);
    for (const mode of ['static', 'lookup'] as const) {
      const target = await startTarget('bench/sessions/server.ts', [mode, db.url]);
      results[mode] = await measure(`http://127.0.0.1:${target.port}/sessions.php?session=${session}`);
      await stop(target.child);
    }
  } finally {
    await db.drop();
  }
  const line = (name: string, r: { rps: number; p99: number; errors: number }) =>
    `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(8)} req/s   p99 ${String(r.p99).padStart(4)} ms   errors ${r.errors}`;
  console.log(`\nGET /sessions.php, ${CONNECTIONS} connections, ${DURATION} s each`);
  console.log(line('(a) bare Fastify, static', results.static!));
  console.log(line('(b) bare Fastify + pg lookup', results.lookup!));
  console.log(line('ours: GET /sessions.php', results.ours));
  console.log(`ours / (b) = ${(results.ours.rps / results.lookup!.rps).toFixed(2)}   ours / (a) = ${(results.ours.rps / results.static!.rps).toFixed(2)}   (target: ours / (b) >= 0.80)`);
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchSessions();
}
