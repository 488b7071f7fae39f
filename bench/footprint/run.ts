/**
 * Start time and idle memory of the server with the embedded database (issue 11, item 6; issue 29, item
 * 4): what `npm start` runs after its prestart (package.json's `start`: its environment, node's flags and
 * dist/src/server.js) without DATABASE_URL, on a fresh DATA_DIR (first
 * start: a copy of the build's embedded template or initdb, migrations, administrator bootstrap) and then
 * restarted on the same DATA_DIR. Per start: seconds to "Listening", also as a ratio to `node -e 0` timed
 * just before it (so that a busy machine slows both alike), the server's CPU seconds by then, and after
 * BENCH_IDLE_MS of idling VmRSS and VmHWM from /proc, the largest anonymous mapping (PGlite's WebAssembly
 * memory) and the process's own view (process.memoryUsage through a tiny --import probe that answers
 * SIGUSR2). Runs scripts/ensure-build.mjs first (what `npm start` runs before the server: builds what
 * changed, prepares the template), so it measures today's sources.
 *
 *   npm run bench footprint            BENCH_FOOTPRINT_ROUNDS=3 BENCH_IDLE_MS=10000 WORKERS=1 by default
 *     BENCH_NODE_FLAGS='--v8-pool-size=2'   node's flags instead of the start script's (an A/B without editing it)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ROUNDS = Number(process.env.BENCH_FOOTPRINT_ROUNDS ?? 3);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 10_000);
const MB = 1024 * 1024;

/** Loaded with --import as a data: URL so that nothing bench-only is compiled into dist. */
const PROBE = `import { writeFileSync } from 'node:fs';
process.on('SIGUSR2', () => { if (process.env.FOOTPRINT_GC) globalThis.gc(); writeFileSync(process.env.FOOTPRINT_PROBE_OUT, JSON.stringify(process.memoryUsage())); });`;

interface Sample {
  listenS: number;
  /** `node -e 0`, timed just before this start. */
  nodeS: number;
  /** listenS / nodeS. */
  ratio: number;
  /** The server's user + system CPU seconds when it printed "Listening". */
  cpuS: number;
  rssMb: number;
  hwmMb: number;
  wasmMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
}

/** Seconds a bare `node -e 0` takes from spawn to exit: the unit of the start ratios. */
function nodeBare(): number {
  const started = performance.now();
  execFileSync(process.execPath, ['-e', '0']);
  return (performance.now() - started) / 1000;
}

/** utime + stime of a process and its threads, in seconds (/proc/<pid>/stat fields 14 and 15, in clock ticks of 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function procStatus(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** Resident size of the largest anonymous read-write mapping: the WebAssembly memory of PGlite. */
async function largestAnonymousMb(pid: number): Promise<number> {
  const smaps = await readFile(`/proc/${pid}/smaps`, 'utf8');
  let best = 0;
  let anonymous = false;
  for (const line of smaps.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) anonymous = header[1]!.startsWith('rw') && header[2] === '';
    else if (anonymous && line.startsWith('Rss:')) best = Math.max(best, Number(/(\d+)/.exec(line)![1]) / 1024);
  }
  return best;
}

async function probe(child: ChildProcess, out: string): Promise<NodeJS.MemoryUsage> {
  await rm(out, { force: true });
  child.kill('SIGUSR2');
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 20));
    try {
      return JSON.parse(await readFile(out, 'utf8')) as NodeJS.MemoryUsage;
    } catch {
      // not written yet
    }
  }
  throw new Error('the memory probe did not answer');
}

interface StartCommand {
  /** The `NAME=value` assignments before `node`. */
  env: Record<string, string>;
  /** node's flags and the script. */
  args: string[];
}

/** package.json's `start` (`NAME=value ... node <flags> <script>`), so that the bench starts the server as `npm start` does. */
async function startCommand(): Promise<StartCommand> {
  const scripts = (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const words = scripts.start!.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Za-z_]\w*=/.test(words[0] ?? '')) {
    const word = words.shift()!;
    env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
  }
  if (words.shift() !== 'node') throw new Error(`cannot read the start script: ${scripts.start}`);
  const flags = process.env.BENCH_NODE_FLAGS;
  return { env, args: flags === undefined ? words : [...flags.split(/\s+/).filter(Boolean), words[words.length - 1]!] };
}

async function startOnce(dataDir: string, command: StartCommand): Promise<Sample> {
  const out = join(dataDir, 'probe.json');
  const nodeS = nodeBare();
  const started = performance.now();
  const child = spawn(process.execPath, [...(process.env.FOOTPRINT_GC ? ['--expose-gc'] : []), '--import', `data:text/javascript,${encodeURIComponent(PROBE)}`, ...command.args], {
    cwd: root,
    env: { ...process.env, ...command.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', WORKERS: process.env.WORKERS ?? '1', FOOTPRINT_PROBE_OUT: out },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (String(chunk).includes('Listening on')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    const listenS = (performance.now() - started) / 1000;
    const cpuS = await cpuSeconds(child.pid!);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const usage = await probe(child, out);
    const { rss, hwm } = await procStatus(child.pid!);
    const wasmMb = await largestAnonymousMb(child.pid!);
    return { listenS, nodeS, ratio: listenS / nodeS, cpuS, rssMb: rss, hwmMb: hwm, wasmMb, heapUsedMb: usage.heapUsed / MB, heapTotalMb: usage.heapTotal / MB, externalMb: usage.external / MB };
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchFootprint() {
  execFileSync(process.execPath, ['scripts/ensure-build.mjs'], { cwd: root, stdio: 'inherit', env: { ...process.env, DATABASE_URL: '' } });
  const command = await startCommand();
  const first: Sample[] = [];
  const restart: Sample[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const dataDir = await mkdtemp(join(tmpdir(), 'footprint-'));
    try {
      first.push(await startOnce(dataDir, command));
      restart.push(await startOnce(dataDir, command));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const loads = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  const shown = [...Object.entries(command.env).map(([name, value]) => `${name}=${value}`), 'node', ...command.args].join(' ');
  console.log(`\nIdle memory, embedded PGlite, WORKERS=${process.env.WORKERS ?? '1'}, ${IDLE_MS / 1000} s after Listening, ${ROUNDS} rounds (median; min-max), load average ${loads}\n${shown}`);
  const column = (samples: Sample[], key: keyof Sample, digits = 0) => {
    const values = samples.map((s) => s[key]);
    return `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)})`;
  };
  for (const [name, samples] of [['first start', first], ['restart', restart]] as const) {
    console.log(
      `${name.padEnd(12)} listening ${column(samples, 'listenS', 2)} s = ${column(samples, 'ratio', 1)} x node -e (${column(samples, 'nodeS', 3)} s)   CPU ${column(samples, 'cpuS', 2)} s   RSS ${column(samples, 'rssMb')} MB   peak ${column(samples, 'hwmMb')} MB   ` +
        `wasm ${column(samples, 'wasmMb')} MB   JS heap used/total ${column(samples, 'heapUsedMb')}/${column(samples, 'heapTotalMb')} MB   external ${column(samples, 'externalMb')} MB`,
    );
  }
  return { first, restart };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchFootprint();
}
