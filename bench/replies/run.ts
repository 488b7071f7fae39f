/**
 * Reply serialisation (issue 11): the contract serialiser (fast-json-stringify compiled from each
 * route's zod reply schema) against JSON.stringify, which is what Fastify used for these routes
 * before they declared a reply. Same process, same payloads, alternating rounds, so a busy machine
 * slows both sides alike. Target: contract / JSON.stringify >= 1.0 for every reply.
 */
import { z } from 'zod';
import { SessionCheck } from '../../src/api/shared/accounts.shapes.js';
import { DataReply } from '../../src/api/shared/data.shapes.js';
import { JobRecord } from '../../src/api/shared/jobs.shapes.js';
import { ConsumptionRecord } from '../../src/api/202203010900/logs.shapes.js';
import { replyContract } from '../../src/http/contract.js';
import { ok } from '../../src/http/envelope.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 300);

const job = (i: number) => ({
  Id: String(i), Session_Id: '0', Training_Id: String(1000 + i), app_name: 'forecast', Status: String(i % 6),
  DateTime: '2024-03-01 09:30:00', User_Name: i % 7 === 0 ? null : `User ${i}`, Nets: '12-24-24-1',
});
const consumption = (i: number) => ({
  id: i, user_id: 12, user_name: 'Ana', date: '2024-03-01 09:30:00', app_name: 'forecast', training_id: i, job_id: i,
  host: 'worker-1', pid: 4242, ram: 512.5, cpu: 12.25, disk: 3.5, date_invoiced: i % 2 ? null : '2024-04-01 00:00:00',
  kind: 'training', client_id: null, usecase_id: null, chat_id: null, model: null, prompt_tokens: null, completion_tokens: null,
});
const row = (i: number) => ({ year: '2024', month: String(1 + (i % 12)), day: String(1 + (i % 28)), store: `S${i % 9}`, promo: i % 3 ? '0' : '1', sales: String(1000 + i) });

const cases: { name: string; schema: z.ZodType; payload: unknown }[] = [
  { name: 'GET /sessions (check)', schema: SessionCheck, payload: ok({ hash: 'q3Jb0tZ2m7cXv1yQ9sLw4eHn8uKp6dRf5aGi0oTz1xA', user: { role: 'consumer', name: 'Ana' } }) },
  { name: 'GET /jobs (200 jobs)', schema: z.array(JobRecord), payload: ok(Array.from({ length: 200 }, (_, i) => job(i + 1))) },
  { name: 'GET /consumptions (500)', schema: z.array(ConsumptionRecord), payload: ok(Array.from({ length: 500 }, (_, i) => consumption(i + 1))) },
  { name: 'GET /data (2000 rows)', schema: DataReply, payload: ok(Array.from({ length: 2000 }, (_, i) => row(i))) },
];

/** Operations per second of `fn` over about `ms` milliseconds. */
function opsPerSecond(fn: () => string, ms: number): number {
  let n = 0;
  let sink = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 20; i++) sink += fn().length;
    n += 20;
    now = performance.now();
  }
  if (sink === 0) throw new Error('nothing serialised');
  return (n * 1000) / (now - start);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchReplies() {
  console.log(`\nReply serialisation, ${ROUNDS} alternating rounds of ${ROUND_MS} ms per side (median ops/s)`);
  const results: Record<string, { before: number; after: number; ratio: number }> = {};
  for (const c of cases) {
    const serialize = replyContract(c.schema).serializerCompiler({ httpStatus: '200' });
    if (serialize(c.payload) !== JSON.stringify(c.payload)) throw new Error(`${c.name}: the contract serialiser changes the reply`);
    const before: number[] = [];
    const after: number[] = [];
    opsPerSecond(() => JSON.stringify(c.payload), ROUND_MS);
    opsPerSecond(() => serialize(c.payload), ROUND_MS);
    for (let round = 0; round < ROUNDS; round++) {
      before.push(opsPerSecond(() => JSON.stringify(c.payload), ROUND_MS));
      after.push(opsPerSecond(() => serialize(c.payload), ROUND_MS));
    }
    const r = { before: median(before), after: median(after), ratio: median(after) / median(before) };
    results[c.name] = r;
    console.log(`${c.name.padEnd(26)} JSON.stringify ${r.before.toFixed(0).padStart(9)}   contract ${r.after.toFixed(0).padStart(9)}   contract / JSON.stringify = ${r.ratio.toFixed(2)}`);
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchReplies();
}
