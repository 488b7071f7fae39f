/**
 * The global model across series (issue 33, src/training/models/global.ts) on real public panels, never
 * generated data: mean MASE over each panel's series on its last h values against the naive and the
 * seasonal naive, for the kept settings and the measured alternatives, plus the timing of a 1,000-series
 * monthly-sized panel (4 rounds, as the engine's 3 backtest windows and final fit).
 *
 *   npx tsx bench/forecast/global-model.ts            # every panel, every variant, both timings
 *   BENCH_GLOBAL_VARIANTS='kept;no clip' BENCH_GLOBAL_TIMING=0 BENCH_GLOBAL_SEED=2 npx tsx bench/forecast/global-model.ts
 *
 * MASE's scale is the series' in-sample mean absolute seasonal difference (lag = season, or 1 without one,
 * or when the training part is shorter than two seasons), as in M4.
 */
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { GLOBAL_DEFAULTS, runGlobalModelWith, type GlobalRound, type GlobalSeries, type GlobalSettings } from '../../src/training/models/global.js';
import { dayStep, group, meanMase, naive, panels, readCsv, seasonalNaive, splitPanel } from './global-panels.js';

/** The kept settings (GLOBAL_DEFAULTS) and one change each. */
const VARIANTS: Record<string, Partial<GlobalSettings>> = {
  kept: {},
  'level target': { target: 'level' },
  'no seasonal step': { seasonalStep: false },
  'diff scale': { scale: 'diff' },
  'series scale only': { rowScale: false },
  'row scale floor 0.2': { scaleFloor: 0.2 },
  'no clip': { clip: 0 },
  'without key': { key: false },
  'with age': { age: true },
  'leaf 10': { minLeaf: 10 },
  'lambda 20': { lambda: 20 },
  'lambda 1000': { lambda: 1000 },
  'base 0 (no mean change)': { base: 'zero' },
  'row cap 2,000': { maxRows: 2000 },
  'depth 3': { depth: 3 },
  'no patience': { patience: 0 },
  '100 rounds at 0.1': { rounds: 100, shrinkage: 0.1 },
  "boosting.ts's exact trees": { learner: 'exact' },
};

export function benchGlobalModel(): void {
  const chosen = (process.env.BENCH_GLOBAL_VARIANTS ?? Object.keys(VARIANTS).join(';')).split(';');
  const names = Object.keys(VARIANTS).filter((v) => chosen.includes(v));
  const rows: string[] = [];
  const totals: Record<string, number[]> = {};
  const seconds: Record<string, number[]> = {};
  console.log(`| panel | series | h | naive | seasonal naive | ${names.join(' | ')} | kept / best naive | kept time |`);
  console.log(`|---|---|---|---|---|${names.map(() => '---|').join('')}---|---|`);
  for (const p of panels()) {
    const splits = splitPanel(p);
    const naiveMase = meanMase(splits, p.season, splits.map(naive));
    const snaiveMase = p.season > 1 ? meanMase(splits, p.season, splits.map((s) => seasonalNaive(s, p.season))) : NaN;
    const round: GlobalRound = { cut: splits.map((s) => s.train.time[s.train.time.length - 1] as number), predict: splits.map((s) => s.future) };
    const cells: string[] = [];
    let keptMase = NaN;
    let keptTime = 0;
    for (const v of names) {
      const t0 = performance.now();
      const result = runGlobalModelWith(
        splits.map((s) => s.train),
        [round],
        { season: p.season, seed: Number(process.env.BENCH_GLOBAL_SEED ?? 1) },
        { ...GLOBAL_DEFAULTS, ...VARIANTS[v] },
      );
      const ms = performance.now() - t0;
      const m = result ? meanMase(splits, p.season, result.predictions[0]!) : NaN;
      (seconds[v] ??= []).push(ms / 1000);
      (totals[v] ??= []).push(m / Math.min(naiveMase, Number.isNaN(snaiveMase) ? Infinity : snaiveMase));
      cells.push(m.toFixed(3));
      if (v === 'kept') {
        keptMase = m;
        keptTime = ms;
      }
    }
    const best = Math.min(naiveMase, Number.isNaN(snaiveMase) ? Infinity : snaiveMase);
    const line = `| ${p.label} | ${splits.length} | ${p.h} | ${naiveMase.toFixed(3)} | ${Number.isNaN(snaiveMase) ? '-' : snaiveMase.toFixed(3)} | ${cells.join(' | ')} | ${(keptMase / best).toFixed(2)} | ${keptTime.toFixed(0)} ms |`;
    rows.push(line);
    console.log(line);
  }
  const geo = (all: number[]) => {
    const a = all.filter((v) => Number.isFinite(v));
    return Math.exp(a.reduce((s, v) => s + Math.log(v), 0) / a.length);
  };
  console.log(`\nGeometric mean over the panels it ran on (null: too small) of (variant / best naive): ${names.map((v) => `${v} ${geo(totals[v]!).toFixed(3)}`).join(', ')}`);
  console.log(`Seconds over all panels: ${names.map((v) => `${v} ${seconds[v]!.reduce((a, b) => a + b, 0).toFixed(1)}`).join(', ')}`);
  if (process.env.BENCH_GLOBAL_TIMING !== '0') {
    timing();
    timingMany();
  }
}

/**
 * 1,000 series of 120 values cut from the real daily weather (2 cities x 4 measures, 120-day windows every
 * 10 days), given a season of 12 as a monthly panel would be: 4 rounds as the engine runs them.
 */
function timing(): void {
  const weather = readCsv('weather.csv');
  const base = ['temp_max', 'temp_min', 'wind', 'precipitation'].flatMap((m) =>
    group(weather, (r) => `${r.location}-${m}`, (r) => dayStep(r.date!), (r) => Number(r[m])),
  );
  const series: GlobalSeries[] = [];
  for (let offset = 0; series.length < 1000; offset += 10) {
    for (const s of base) {
      if (series.length >= 1000) break;
      series.push({ time: Array.from({ length: 120 }, (_, i) => i), values: s.values.slice(offset, offset + 120) });
    }
  }
  const h = 12;
  const rounds: GlobalRound[] = [3, 2, 1, 0].map((w) => ({
    cut: series.map(() => 119 - h * w),
    predict: series.map(() => (w === 0 ? Array.from({ length: h }, (_, i) => 120 + i) : Array.from({ length: h }, (_, i) => 120 - h * w + i))),
  }));
  let last = performance.now();
  let maxGap = 0;
  let gapAt = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const result = runGlobalModelWith(series, rounds, {
    season: 12,
    seed: 7,
    progress: (share) => {
      const now = performance.now();
      if (now - last > maxGap) {
        maxGap = now - last;
        gapAt = share;
      }
      last = now;
    },
  }, GLOBAL_DEFAULTS);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0).user / 1000;
  console.log(`\nTiming: 1,000 series x 120 values (real daily weather windows, season 12), 4 rounds: wall ${(ms / 1000).toFixed(2)} s (${(ms / 4000).toFixed(2)} s per round), CPU ${(cpu / 1000).toFixed(2)} s, load average ${loadavg()[0]?.toFixed(1)}, longest gap between progress calls ${maxGap.toFixed(0)} ms (ending at share ${gapAt.toFixed(3)}), heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`);
  console.log(result?.description);
}

// Run when executed itself (npx tsx); bench/run.ts may import benchGlobalModel instead.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) benchGlobalModel();

/**
 * 50,000 series of 3 values (issue 33's "50,000 series of 3 rows"): 3-day windows of the same real daily
 * weather, taken again from the start once the 8 series' 11.2k distinct windows run out; a backtest round
 * predicting each series' third value from its first two, and a final round forecasting 3 steps.
 */
function timingMany(): void {
  const weather = readCsv('weather.csv');
  const base = ['temp_max', 'temp_min', 'wind', 'precipitation'].flatMap((m) =>
    group(weather, (r) => `${r.location}-${m}`, (r) => dayStep(r.date!), (r) => Number(r[m])),
  );
  const series: GlobalSeries[] = [];
  for (let offset = 0; series.length < 50_000; offset++) {
    for (const s of base) {
      if (series.length >= 50_000) break;
      const at = offset % (s.values.length - 3);
      series.push({ time: [0, 1, 2], values: s.values.slice(at, at + 3) });
    }
  }
  const rounds: GlobalRound[] = [
    { cut: series.map(() => 1), predict: series.map(() => [2]) },
    { cut: series.map(() => 2), predict: series.map(() => [3, 4, 5]) },
  ];
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const result = runGlobalModelWith(series, rounds, { season: 1, seed: 7 }, GLOBAL_DEFAULTS);
  const ms = performance.now() - t0;
  console.log(
    `Timing: 50,000 series x 3 values, 2 rounds: wall ${(ms / 1000).toFixed(2)} s, CPU ${(process.cpuUsage(cpu0).user / 1e6).toFixed(2)} s, RSS ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`,
  );
  console.log(result?.description);
}
