/**
 * The machine's ceiling for the speed-up case (issue 34): what two processes can do at most over one on this
 * machine for this very work. The speed-up case's panel (BENCH_PARTS_SPEEDUP_SERIES monthly series) is trained
 * by the engine in-process, start to end on one thread (engine.ts trainModel, as one training thread runs a
 * panel), in one process alone and then in two processes at once, alternated over BENCH_PARTS_ROUNDS rounds;
 * no database, no queue, nothing shared between the two. Ceiling = 2 x alone wall / the pair's longer wall: a
 * job split over two processes perfectly, with no serial step and no coordination, would reach this and no more.
 * Each run also gives its process's CPU (every thread: the engine and V8's helpers). With a warm-up size (the
 * speed-up case's BENCH_PARTS_WARM), each process first trains a panel of that many series and only the second
 * training is measured: the ceiling of processes whose engine V8 has already compiled.
 *
 *   BENCH_PARTS_ONLY=ceiling npm run bench parts
 *   npx tsx bench/parts/ceiling.ts child <series> [warm-up series]     one run, prints {"wallMs", "cpuSeconds"}
 */
import { spawn } from 'node:child_process';
import { trainModel } from '../../src/training/index.js';
import { inputOf } from '../forecast/datasets.js';
import { uploadOf } from '../forecast/panels-data.js';
import { monthlyPanel } from '../forecast/panel-speed.js';

export interface CeilingRun {
  wallMs: number;
  cpuSeconds: number;
}

/** The panel's upload read as the service reads it (TRAINING_MAX_ROWS' default). */
function panelInput(series: number) {
  const read = inputOf(uploadOf(monthlyPanel(series)));
  return { ...read, params: { ...read.params, maxKnownRows: 100_000 } };
}

/** One in-process run of the panel, after a warm-up panel of `warm` series when warm > 0. */
function child(series: number, warm: number): CeilingRun {
  if (warm > 0) trainModel(panelInput(warm), {});
  const input = panelInput(series);
  const cpu = process.cpuUsage();
  const started = performance.now();
  trainModel(input, {});
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - started, cpuSeconds: (used.user + used.system) / 1e6 };
}

/** A run in its own process, with the image's V8 flag (the processes of the speed-up case run with it). */
function runChild(series: number, warm: number): Promise<CeilingRun> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--v8-pool-size=2', '--import', 'tsx', import.meta.filename, 'child', String(series), String(warm)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as CeilingRun) : reject(new Error(`ceiling child exited with ${code}`))));
  });
}

/** Alone and pair runs, alternated: each round's alone run, then its pair. */
export async function ceilingRounds(series: number, rounds: number, warm = 0): Promise<{ alone: CeilingRun[]; pairs: [CeilingRun, CeilingRun][] }> {
  const alone: CeilingRun[] = [];
  const pairs: [CeilingRun, CeilingRun][] = [];
  for (let round = 0; round < rounds; round++) {
    alone.push(await runChild(series, warm));
    const [first, second] = await Promise.all([runChild(series, warm), runChild(series, warm)]);
    pairs.push([first, second]);
  }
  return { alone, pairs };
}

if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] === 'child') {
  console.log(JSON.stringify(child(Number(process.argv[3]), Number(process.argv[4] ?? 0))));
}
