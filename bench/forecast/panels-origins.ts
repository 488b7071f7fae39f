/**
 * The several-origins bar for a change to the engine (docs/benchmarks.md, panels: "Several origins"): every panel
 * of the three sets (the 13, the validation and the held-out ones) forecast from the last origin and from 1, 2 and 3
 * horizons earlier (panels.ts BENCH_PANELS_ORIGIN), ours and the naives only (BENCH_FORECAST_PEERS=0: R's fits are
 * not needed to compare two engines), then one checkout's figures against another's.
 *
 *   npx tsx bench/forecast/panels-origins.ts run                 the 12 runs into this checkout's bench/.out
 *   npx tsx bench/forecast/panels-origins.ts compare BASE [EXP]  BASE's bench/.out against EXP's (default: this one)
 *   npx tsx bench/forecast/panels-origins.ts run --with-r        the 12 runs with R's models too (fits reused from
 *                                                                bench/.out/panels-r-peers.json where stored)
 *   npx tsx bench/forecast/panels-origins.ts targets             the two targets at each origin and over the
 *                                                                four, from the runs with R's models (a set with
 *                                                                none, e.g. held-out alone run with
 *                                                                BENCH_PANELS_FRESH=1 BENCH_PANELS_ORIGIN=k, is left out)
 *
 * BASE and EXP are checkouts (a git worktree per engine: `git worktree add ../base <rev>`); ours is deterministic,
 * so the two may run at the same time. The bar: more changed panel-origins better than worse, and a geometric mean
 * of ours-after over ours-before on the changed ones at or below 1.0 (with the standing single-series tables within
 * 1%, which `npm run bench forecast corpus subdaily` checks).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { panelMeans, R_MODELS, runName, type StoredRun } from './panels.js';
import { OUT } from './panels-ours.js';

const ORIGINS = [0, 1, 2, 3];
const SETS = [
  { name: 'main', env: {} },
  { name: 'validation', env: { BENCH_PANELS_EXTRA: '1' } },
  { name: 'held-out', env: { BENCH_PANELS_FRESH: '1' } },
] as const;

const fileOf = (set: (typeof SETS)[number], origin: number) => `${runName({ extra: 'BENCH_PANELS_EXTRA' in set.env, fresh: 'BENCH_PANELS_FRESH' in set.env, origin })}.json`;

function run(withR: boolean): void {
  // The sets, panels and files are this script's to choose: a caller's switches would rename or narrow the runs.
  const switches = ['EXTRA', 'FRESH', 'ONLY', 'ORIGIN', 'OURS', 'SERVICE'].map((name) => `BENCH_PANELS_${name}`);
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !switches.includes(name)));
  for (const origin of ORIGINS) {
    for (const set of SETS) {
      const started = Date.now();
      const log = join(OUT, `${fileOf(set, origin).replace(/\.json$/, '')}.log`);
      const child = spawnSync('npx', ['tsx', 'bench/run.ts', 'panels'], {
        cwd: join(OUT, '..', '..'),
        env: { ...inherited, ...set.env, BENCH_PANELS_ORIGIN: String(origin), BENCH_FORECAST_PEERS: withR ? 'cached' : '0' },
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
      });
      writeFileSync(log, `${child.stdout}${child.stderr}`);
      if (child.status !== 0) throw new Error(`${set.name} at origin ${origin} failed (exit ${child.status}); see ${log}`);
      console.log(`${set.name}, origin ${origin}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  }
}

/** Ours per series (by key) of each panel (by id); not a number where a series has no forecast. */
function panelScores(path: string): Map<string, Map<string, number | undefined>> {
  const file = JSON.parse(readFileSync(path, 'utf8')) as StoredRun;
  return new Map(file.results.map((panel) => [panel.id, new Map(panel.series.map((s) => [s.key, s.ours]))]));
}

/**
 * A panel's mean before and after over the series both forecast (US workers at earlier origins leaves some series
 * too short to forecast in either); null where none is.
 */
function pairedMeans(before: Map<string, number | undefined>, after: Map<string, number | undefined>): [number, number] | null {
  const pairs = [...before].flatMap(([key, x]) => {
    const y = after.get(key);
    return typeof x === 'number' && typeof y === 'number' ? [[x, y] as const] : [];
  });
  if (pairs.length === 0) return null;
  return [pairs.reduce((s, [x]) => s + x, 0) / pairs.length, pairs.reduce((s, [, y]) => s + y, 0) / pairs.length];
}

/** Whether a panel-origin's mean moved between two engines (beyond rounding). */
export const moved = ([x, y]: readonly [number, number]) => Math.abs(x - y) > 1e-9 * Math.max(1, Math.abs(x));

/** The bar over panel-origins' means before and after a change: how many changed, better and worse, their geometric mean, the verdict. */
export function barOf(pairs: readonly (readonly [number, number])[]) {
  const ratios = pairs.filter(moved).map(([x, y]) => y / x);
  const better = ratios.filter((r) => r < 1).length;
  const worse = ratios.length - better;
  const geomean = ratios.length > 0 ? Math.exp(ratios.reduce((s, r) => s + Math.log(r), 0) / ratios.length) : 1;
  const verdict = ratios.length === 0 ? 'no change' : better > worse && geomean <= 1 ? 'clears the bar' : 'misses the bar';
  return { changed: ratios.length, better, worse, geomean, verdict };
}

function compare(baseDir: string, expDir: string): void {
  const pairs: [number, number][] = [];
  for (const origin of ORIGINS) {
    for (const set of SETS) {
      const before = join(baseDir, 'bench', '.out', fileOf(set, origin));
      const after = join(expDir, 'bench', '.out', fileOf(set, origin));
      const missing = [before, after].find((path) => !existsSync(path));
      if (missing) {
        console.error(`missing ${missing}: run this script's 'run' in that checkout first`);
        process.exit(1);
      }
      const a = panelScores(before);
      const b = panelScores(after);
      for (const [id, series] of a) {
        const means = pairedMeans(series, b.get(id) ?? new Map());
        if (!means) continue;
        const [x, y] = means;
        pairs.push(means);
        if (!moved(means)) continue;
        console.log(`origin ${origin}  ${set.name.padEnd(10)}  ${id.padEnd(32)}  ${x.toFixed(3)} -> ${y.toFixed(3)}`);
      }
    }
  }
  const bar = barOf(pairs);
  console.log(
    `\n${pairs.length} panel-origins compared, ${bar.changed} changed: ${bar.better} better, ${bar.worse} worse, geometric mean of the changed ${bar.geomean.toFixed(3)}` +
      ` -> ${bar.verdict}${bar.verdict === 'clears the bar' ? ' (check the single-series tables too)' : ''}`,
  );
}

/** One panel at one origin as this checkout's runs with R's models scored it (panels.ts panelMeans; ours forecast every series). */
export interface PanelOrigin {
  set: (typeof SETS)[number]['name'];
  origin: number;
  id: string;
  ours: number;
  /** The best naive's mean MASE. */
  naive: number;
  /** R's best model's, chosen after seeing the hidden values. */
  r: number;
  /** Each R model's where it ran on every series. */
  models: Partial<Record<string, number>>;
}

/** Every panel-origin of this checkout's 12 runs with R's models (`run --with-r`); throws where a run is missing or has no R. */
export function panelOrigins(sets: readonly (typeof SETS)[number][] = SETS): PanelOrigin[] {
  const rows: PanelOrigin[] = [];
  for (const origin of ORIGINS) {
    for (const set of sets) {
      const path = join(OUT, fileOf(set, origin));
      if (!existsSync(path)) throw new Error(`missing ${path}: run \`npx tsx bench/forecast/panels-origins.ts run --with-r\` first`);
      for (const result of (JSON.parse(readFileSync(path, 'utf8')) as StoredRun).results) {
        const means = panelMeans(result);
        if (means.ours === undefined || means.forecast < means.scored) continue;
        if (!means.bestR) throw new Error(`${path} has no R model for ${result.id}: run \`npx tsx bench/forecast/panels-origins.ts run --with-r\`, not \`run\``);
        rows.push({ set: set.name, origin, id: result.id, ours: means.ours, naive: means.bestNaive[1], r: means.bestR[1], models: means.r });
      }
    }
  }
  return rows;
}

/**
 * The two panel targets read at every origin rather than the last alone: per set and origin, the panels at or
 * below their best naive and the mean of ours against the mean of R's best model per panel (R's best chosen after
 * seeing the hidden values, as panels.ts reports it); then over all panel-origins. One hidden window per panel moves a
 * panel's mean by up to 14% either way, so the four origins say more than the last one.
 */
function targets(): void {
  // A set without a single run (its R fits not made on this machine, say) is left out and named; the lines over
  // all sets are printed only when every set is there.
  const present = SETS.filter((set) => ORIGINS.some((origin) => existsSync(join(OUT, fileOf(set, origin)))));
  for (const set of SETS.filter((s) => !present.includes(s))) console.log(`${set.name}: no runs in ${OUT}, left out`);
  const rows = panelOrigins(present);
  type Row = PanelOrigin;
  const meanOf = (of: Row[], pick: (row: Row) => number) => of.reduce((sum, row) => sum + pick(row), 0) / of.length;
  const line = (label: string, of: Row[]) => {
    const [ours, r] = [meanOf(of, (row) => row.ours), meanOf(of, (row) => row.r)];
    const atNaive = of.filter((row) => row.ours <= row.naive).length;
    const atR = of.filter((row) => row.ours <= row.r).length;
    // How often the first target can be met at all: R's best model chosen after seeing the hidden values, against the best naive.
    const rAtNaive = of.filter((row) => row.r <= row.naive).length;
    console.log(
      `${label.padEnd(24)} ${String(of.length).padStart(4)} panels: at or below the best naive ${atNaive} (R's best ${rAtNaive}), at or below R's best ${atR}; ` +
        `mean ours ${ours.toFixed(3)}, best naive ${meanOf(of, (row) => row.naive).toFixed(3)}, R's best ${r.toFixed(3)}, ours / R's best ${(ours / r).toFixed(3)}`,
    );
  };
  for (const set of present) for (const origin of ORIGINS) line(`${set.name}, origin ${origin}`, rows.filter((row) => row.set === set.name && row.origin === origin));
  for (const set of present) line(`${set.name}, four origins`, rows.filter((row) => row.set === set.name));
  if (present.length === SETS.length) {
    for (const origin of ORIGINS) line(`all, origin ${origin}`, rows.filter((row) => row.origin === origin));
    line('all, four origins', rows);
  }
  // R's best is each panel-origin's best model after seeing the hidden values; each model alone is what a user of R gets.
  for (const [model, label] of R_MODELS) {
    const ran = rows.filter((row) => row.models[model] !== undefined);
    const [ours, theirs] = [meanOf(ran, (row) => row.ours), meanOf(ran, (row) => row.models[model] as number)];
    console.log(
      `${label.padEnd(24)} ${String(ran.length).padStart(4)} panels where it ran: ours at or below it ${ran.filter((row) => row.ours <= (row.models[model] as number)).length}; mean ours ${ours.toFixed(3)}, it ${theirs.toFixed(3)}, ours / it ${(ours / theirs).toFixed(3)}`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === 'run') run(args[0] === '--with-r');
  else if (mode === 'compare' && args[0]) compare(resolve(args[0]), resolve(args[1] ?? '.'));
  else if (mode === 'targets') {
    try {
      targets();
    } catch (error) {
      console.error((error as Error).message);
      process.exit(1);
    }
  }
  else {
    console.error('usage: panels-origins.ts run [--with-r] | compare BASE_CHECKOUT [EXP_CHECKOUT] | targets');
    process.exit(2);
  }
}
