/**
 * The reply contract over real HTTP (issue 11: "measure the session check and a list endpoint before
 * and after: it must not get slower"). Three server processes on one fresh Postgres database:
 *   (a) bare Fastify answering a static envelope (the framework's ceiling, the same-run baseline),
 *   ours with the contract serialiser (fast-json-stringify from each route's zod reply schema),
 *   ours with every reply written by JSON.stringify (the serialiser switched off: the "before").
 * Calls: GET /sessions.php (the session check) and GET /jobs.php job_id=0 listing BENCH_JOBS jobs.
 * Rounds alternate between the two variants of ours, so a busy machine slows both alike; the table
 * gives median req/s and each variant's ratio to (a).
 *
 *   npm run bench contract     BENCH_ROUNDS=5 BENCH_SECONDS=5 BENCH_JOBS=200 by default
 */
import autocannon from 'autocannon';
import { readFile } from 'node:fs/promises';
import { freshDatabase, startTarget, stop } from '../support.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const JOBS = Number(process.env.BENCH_JOBS ?? 200);
const CONNECTIONS = 32;

async function measure(url: string): Promise<number> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS });
  if (result.errors + result.non2xx > 0) throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  return result.requests.average;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A reply's shape: its keys and leaf types, not its values (each variant has its own user and ids). */
const shapeOf = (value: unknown): unknown =>
  Array.isArray(value) ? value.map(shapeOf) : value && typeof value === 'object' ? Object.entries(value).map(([k, v]) => [k, shapeOf(v)]) : typeof value;

/** Both variants answer success envelopes of the same shape, and only the switched-off one through JSON.stringify. */
async function checkVariants(contractUrl: string, plainUrl: string): Promise<void> {
  const [contract, plain] = await Promise.all([fetch(contractUrl), fetch(plainUrl)]);
  const [a, b] = [await contract.text(), await plain.text()];
  const same = JSON.stringify(shapeOf(JSON.parse(a))) === JSON.stringify(shapeOf(JSON.parse(b)));
  if (!a.startsWith('{"status":0') || !same) throw new Error(`the variants differ or fail: ${a.slice(0, 200)} / ${b.slice(0, 200)}`);
  if (contract.headers.has('x-serializer') || plain.headers.get('x-serializer') !== 'JSON.stringify') throw new Error('the serialiser switch did not apply');
}

export async function benchContract() {
  const db = await freshDatabase('bench_contract');
  const targets: Awaited<ReturnType<typeof startTarget>>[] = [];
  try {
    const contract = await startTarget('bench/sessions/server.ts', ['app', db.url, String(JOBS)]);
    targets.push(contract);
    const plain = await startTarget('bench/sessions/server.ts', ['app-json', db.url, String(JOBS)]);
    targets.push(plain);
    const bare = await startTarget('bench/sessions/server.ts', ['static', db.url]);
    targets.push(bare);
    const api = (t: { port: number; extra: string }, path: string) => `http://127.0.0.1:${t.port}/api/202203010900${path}${path.includes('?') ? '&' : '?'}session=${t.extra}`;
    const calls = {
      'GET /sessions.php (session check)': (t: typeof contract) => api(t, '/sessions.php'),
      [`GET /jobs.php (list of ${JOBS} jobs)`]: (t: typeof contract) => api(t, '/jobs.php?tz=UTC&job_id=0'),
    };
    const bareUrl = `http://127.0.0.1:${bare.port}/sessions.php`;
    const rows: string[] = [];
    for (const [name, url] of Object.entries(calls)) {
      await checkVariants(url(contract), url(plain));
      const jobs = JSON.parse(await (await fetch(url(contract))).text()) as { data: unknown[] | object };
      if (name.includes('jobs') && (!Array.isArray(jobs.data) || jobs.data.length !== JOBS)) throw new Error(`expected ${JOBS} jobs`);
      // Warm-up: the JIT and the pools settle before measuring.
      for (const u of [url(contract), url(plain), bareUrl]) await autocannon({ url: u, connections: CONNECTIONS, duration: 2 });
      const r = { bare: [] as number[], contract: [] as number[], plain: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        // Alternating order, so neither variant always runs right after the other.
        const order = round % 2 === 0 ? (['contract', 'plain'] as const) : (['plain', 'contract'] as const);
        r.bare.push(await measure(bareUrl));
        for (const variant of order) r[variant].push(await measure(url(variant === 'contract' ? contract : plain)));
      }
      const [bareRps, contractRps, plainRps] = [median(r.bare), median(r.contract), median(r.plain)];
      const perRound = r.contract.map((c, i) => c / r.plain[i]!);
      rows.push(
        `| ${name} | ${bareRps.toFixed(0)} | ${plainRps.toFixed(0)} (${(plainRps / bareRps).toFixed(3)}) | ${contractRps.toFixed(0)} (${(contractRps / bareRps).toFixed(3)}) | ` +
          `${(contractRps / plainRps).toFixed(2)} (rounds ${perRound.map((x) => x.toFixed(2)).join(', ')}) |`,
      );
    }
    const loads = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
    console.log(`\nReply contract over HTTP: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s, median req/s (ratio to (a)); load average ${loads}`);
    console.log('| call | (a) bare Fastify, static | ours, JSON.stringify (serialiser off) | ours, contract serialiser | contract / JSON.stringify |');
    console.log('|---|---:|---:|---:|---|');
    for (const row of rows) console.log(row);
  } finally {
    for (const t of targets) await stop(t.child);
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchContract();
}
