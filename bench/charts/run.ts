/**
 * Chart rendering (issue 24): a 10,000-row daily series with a 30-day forecast and its bands, drawn in
 * full (history=0) by the charts service as a Vega-Lite spec, SVG and PNG. The service reads through
 * in-memory stand-ins of the jobs and data services, so the figure is the drawing, not the database.
 * Baseline in the same run: JSON.stringify of the same spec (what format=vega costs to serialise).
 * SVG and PNG are drawn on the render pool's worker thread, as the server draws them; "png, request
 * thread" draws on the caller's thread, as before the pool.
 * Also writes bench/.out/chart.png and chart.svg (the default view, the last 500 rows) to look at.
 *
 * Event-loop block: the longest and the 99th-percentile gap between the turns of a 1 ms timer while one
 * full PNG is drawn, on the caller's thread (as before the render pool, the baseline) and on the
 * render pool's worker thread, median over the rounds, as a ratio after/before.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createHistogram } from 'node:perf_hooks';
import { createChartsService, type ChartQuery } from '../../src/domain/charts/charts.service.js';
import { inThreadRenderer } from '../../src/domain/charts/render.js';
import type { Caller } from '../../src/domain/caller.js';
import type { DataService } from '../../src/domain/data/data.service.js';
import type { JobsService } from '../../src/domain/jobs/jobs.service.js';

const ROWS = Number(process.env.BENCH_CHART_ROWS ?? 10_000);
const HORIZON = 30;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

type Row = Record<string, string | null>;

function dailySeries(rows: number) {
  const start = Date.UTC(1990, 0, 1);
  const date = (i: number) => new Date(start + i * 86_400_000);
  const value = (i: number) => 500 + 0.02 * i + 40 * Math.sin((2 * Math.PI * i) / 365.25) + 15 * Math.sin((2 * Math.PI * i) / 7) + ((i * 7919) % 23) - 11;
  const parts = (i: number) => ({ year: String(date(i).getUTCFullYear()), month: String(date(i).getUTCMonth() + 1), day: String(date(i).getUTCDate()) });
  const input: Row[] = Array.from({ length: rows }, (_, i) => ({ ...parts(i), load: value(i).toFixed(2) }));
  const output: Row[] = Array.from({ length: HORIZON }, (_, k) => {
    const i = rows + k;
    const v = value(i);
    const w = 8 + k * 0.4;
    return { ...parts(i), load: v.toFixed(2), load_lo80: (v - w).toFixed(2), load_hi80: (v + w).toFixed(2), load_lo95: (v - 1.6 * w).toFixed(2), load_hi95: (v + 1.6 * w).toFixed(2) };
  });
  return { input, output };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function timed<T>(fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

export async function benchCharts() {
  const { input, output } = dailySeries(ROWS);
  const dateColumns = ['year', 'month', 'day'].map((name) => ({ name, type: 'date', role: 'date', date_part: name }));
  const columns = [...dateColumns, { name: 'load', type: 'numeric', role: 'output' }];
  const selection = {
    modelFamily: 'auto' as const,
    scheme: 'rolling-origin' as const,
    windows: 3,
    horizon: HORIZON,
    frequency: 'daily',
    season: 7,
    outputs: [{ column: 'load', kind: 'numeric' as const, metric: 'MAE' as const, chosen: 'sarima', description: 'sarima', error: 6.2, baseline: { name: 'seasonal-naive', error: 11.8 }, candidates: [] }],
  };
  const jobs = { get: async () => ({ id: 1, status: 3, selection }) } as unknown as Pick<JobsService, 'get'>;
  const data = {
    columns: async () => columns,
    // Only the output is read whole (with its row count); the input comes as the tail the chart asks for.
    rows: async (_caller: Caller, q: { progress: 0 | 1 }) => (q.progress ? [{ count: String(output.length) }] : output),
    knownTail: async (_caller: Caller, q: { last: number }) => {
      const rows = input.slice(-q.last);
      return { known: input.length, rows, positions: rows.map((_, i) => input.length - rows.length + i + 1) };
    },
  } as unknown as Pick<DataService, 'columns' | 'rows' | 'knownTail'>;
  const charts = createChartsService({ jobs, data });
  const inThread = createChartsService({ jobs, data, renderer: inThreadRenderer });
  const caller = { userId: 1, role: 'consumer' } as Caller;
  const query: ChartQuery = { jobId: 1, history: 0, width: 1000, height: 360 };

  // Warm-up: module loading, the first compile and the font files; the default view (last 500 rows) to look at.
  const svg = await charts.svg(caller, query);
  const png = await charts.png(caller, query);
  await inThread.png(caller, query); // Vega and the fonts loaded on this thread too
  mkdirSync('bench/.out', { recursive: true });
  writeFileSync('bench/.out/chart.svg', await charts.svg(caller, { ...query, history: 500 }));
  writeFileSync('bench/.out/chart.png', await charts.png(caller, { ...query, history: 500 }));

  const samples = { baseline: [] as number[], spec: [] as number[], svg: [] as number[], png: [] as number[], 'png, request thread': [] as number[], 'png, last 500 rows': [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    const spec = await timed(() => charts.spec(caller, query));
    samples.spec.push(spec.ms);
    samples.baseline.push((await timed(() => JSON.stringify(spec.value))).ms);
    samples.svg.push((await timed(() => charts.svg(caller, query))).ms);
    samples.png.push((await timed(() => charts.png(caller, query))).ms);
    samples['png, request thread'].push((await timed(() => inThread.png(caller, query))).ms);
    samples['png, last 500 rows'].push((await timed(() => charts.png(caller, { ...query, history: 500 }))).ms);
  }

  // The event loop's longest wait while one full PNG is drawn: the gaps between the turns of a 1 ms timer
  // (a perf_hooks histogram; monitorEventLoopDelay reads the loop's cached clock and misses a long block).
  const block = { before: { max: [] as number[], p99: [] as number[] }, after: { max: [] as number[], p99: [] as number[] } };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, service] of [['before', inThread], ['after', charts]] as const) {
      const gaps = createHistogram();
      let last = performance.now();
      const tick = setInterval(() => {
        const now = performance.now();
        gaps.record(Math.max(1, Math.round((now - last) * 1000)));
        last = now;
      }, 1);
      await service.png(caller, query);
      // One more turn, so the gap the drawing held the loop for is recorded.
      await new Promise((resolve) => setTimeout(resolve, 5));
      clearInterval(tick);
      block[name].max.push(gaps.max / 1000);
      block[name].p99.push(gaps.percentile(99) / 1000);
    }
  }
  await charts.close();

  const base = median(samples.baseline);
  console.log(`\nCharts: ${ROWS} known rows + ${HORIZON} forecast rows with 80%/95% bands, 1000 x 360 px, median of ${ROUNDS} rounds`);
  console.log(`  baseline JSON.stringify of the spec: ${base.toFixed(2)} ms`);
  for (const name of ['spec', 'svg', 'png', 'png, request thread', 'png, last 500 rows'] as const) {
    const ms = median(samples[name]);
    console.log(`  ${name.padEnd(20)} ${ms.toFixed(1).padStart(7)} ms  (${(ms / base).toFixed(0)} x baseline; fastest ${Math.min(...samples[name]).toFixed(1)} ms)`);
  }
  const [beforeMax, afterMax, beforeP99, afterP99] = [block.before.max, block.after.max, block.before.p99, block.after.p99].map(median) as [number, number, number, number];
  console.log(`  event-loop gaps while one full PNG is drawn (median of ${ROUNDS}): on the request's thread max ${beforeMax.toFixed(0)} ms, p99 ${beforeP99.toFixed(0)} ms;`);
  console.log(`    on the render pool max ${afterMax.toFixed(1)} ms, p99 ${afterP99.toFixed(1)} ms (max ${(afterMax / beforeMax).toFixed(3)} x, p99 ${(afterP99 / beforeP99).toFixed(3)} x before)`);
  console.log(`  sizes: SVG ${(svg.length / 1024).toFixed(0)} KiB, PNG ${(png.length / 1024).toFixed(0)} KiB; the default view (last 500 rows) is in bench/.out/chart.svg and chart.png`);
}
