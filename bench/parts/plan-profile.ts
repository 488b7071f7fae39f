/**
 * Where a panel's planning goes (issue 34), in-process, step by step as engine.ts trainOrPlan runs it on the
 * planning thread: the whole upload's analysis (analyse), the key detection (detectKeys), planPanel (each
 * series read and prepared: its readMs; then the global model's task and the parts), and the JSON the runner
 * stores (plan, global task, parts). After each step: its wall and the heap still held (after a full GC), and
 * at the end the process's peak RSS. The panel is bench/forecast/panel-speed.ts monthlyPanel (real series
 * repeated), with maxKnownRows as the service's training set sets it (TRAINING_MAX_ROWS, default 100,000).
 *
 *   node --expose-gc --max-old-space-size=8192 --import tsx bench/parts/plan-profile.ts [series...]
 *   (default 2000 10000; BENCH_PLAN_MAX_ROWS=100000, BENCH_PLAN_PART_UNITS=5000)
 */
import { readFileSync } from 'node:fs';
import { inputOf } from '../forecast/datasets.js';
import { uploadOf } from '../forecast/panels-data.js';
import { monthlyPanel } from '../forecast/panel-speed.js';
import { withDateCache } from '../../src/training/core/dates.js';
import { detectKeys, planPanel } from '../../src/training/panel/panel.js';
import { analyse } from '../../src/training/core/series.js';

const MAX_ROWS = Number(process.env.BENCH_PLAN_MAX_ROWS ?? 100_000);
const PART_UNITS = Number(process.env.BENCH_PLAN_PART_UNITS ?? 5000);
const gc = (globalThis as { gc?: () => void }).gc;
const heldMb = () => {
  gc?.();
  return Math.round(process.memoryUsage().heapUsed / 2 ** 20);
};
const peakRssMb = () => Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024);

function profile(series: number): string {
  const steps: string[] = [];
  const step = <T>(name: string, run: () => T): T => {
    const started = performance.now();
    const value = run();
    steps.push(`${name} ${((performance.now() - started) / 1000).toFixed(1)} s (heap held ${heldMb()} MB)`);
    return value;
  };
  const base = heldMb();
  const input = step('input', () => {
    const i = inputOf(uploadOf(monthlyPanel(series)));
    return { ...i, params: { ...i.params, maxKnownRows: MAX_ROWS } };
  });
  return withDateCache(() => {
    const analysis = step('analyse (whole upload)', () => analyse(input));
    const grouping = step('detectKeys', () => detectKeys(input, analysis));
    if (!grouping) return `${series} series: no keys found`;
    const planned = step('planPanel', () => planPanel(input, grouping, 1, { partUnits: PART_UNITS }));
    const texts = step('JSON of plan, global, parts', () => ({
      plan: JSON.stringify(planned.plan).length,
      global: planned.global ? JSON.stringify(planned.global.task).length : 0,
      parts: planned.parts.reduce((s, p) => s + JSON.stringify(p.part).length, 0),
    }));
    return `${series} series (${input.rows.length} rows; heap before ${base} MB): ${steps.join('; ')}; planPanel's readMs (series read and prepared) ${(planned.plan.readMs / 1000).toFixed(1)} s; ${planned.parts.length} parts, ${planned.global?.task.rounds.length ?? 0} global rounds; stored text: plan ${(texts.plan / 1e6).toFixed(1)} MB, global ${(texts.global / 1e6).toFixed(1)} MB, parts ${(texts.parts / 1e6).toFixed(1)} MB; peak RSS ${peakRssMb()} MB`;
  });
}

const counts = process.argv.slice(2).map(Number);
for (const n of counts.length > 0 ? counts : [2000, 10_000]) console.log(profile(n));
