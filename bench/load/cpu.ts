/**
 * Who had the machine's cores during a phase, from /proc (Linux only; elsewhere every figure is 0):
 * the whole machine, the API process split into its main (event loop) thread and its other threads
 * (training workers, libuv pool), every `postgres` process, and this load generator.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on every Linux build we run on

/** utime + stime of one /proc/.../stat file, in ticks (fields 14 and 15; comm may contain spaces). */
function statTicks(file: string): number {
  try {
    const text = readFileSync(file, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

function machineTicks(): { busy: number; total: number } {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - cpu[3]! - cpu[4]!, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

/** Ticks of each `postgres` process (one per connection, so they come and go between snapshots). */
function postgresTicks(): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const pid of safeList('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') ticks.set(pid, statTicks(`/proc/${pid}/stat`));
    } catch {
      // The process ended while we looked.
    }
  }
  return ticks;
}

/** What the postgres processes spent between two snapshots (those that ended meanwhile are missed). */
function postgresDelta(first: Map<string, number>, last: Map<string, number>): number {
  let sum = 0;
  for (const [pid, ticks] of last) sum += ticks - (first.get(pid) ?? 0);
  return sum;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

interface Snapshot {
  at: number;
  machine: { busy: number; total: number };
  apiMain: number;
  apiAll: number;
  postgres: Map<string, number>;
  generator: number;
}

function snapshot(apiPid: number): Snapshot {
  return {
    at: performance.now(),
    machine: machineTicks(),
    apiMain: statTicks(`/proc/${apiPid}/task/${apiPid}/stat`),
    apiAll: statTicks(`/proc/${apiPid}/stat`),
    postgres: postgresTicks(),
    generator: statTicks(`/proc/${process.pid}/stat`),
  };
}

/** CPU use between start() and the returned stop(), in percent of one core (200 = both cores busy). */
export function cpuMeter(apiPid: number) {
  const first = snapshot(apiPid);
  return () => {
    const last = snapshot(apiPid);
    const seconds = (last.at - first.at) / 1000;
    const pct = (ticks: number) => Math.round((ticks / TICKS_PER_SECOND / seconds) * 100);
    // /proc/stat's first line adds up every CPU, so its ticks are core-seconds too.
    return {
      cores: Math.round((last.machine.total - first.machine.total) / TICKS_PER_SECOND / seconds),
      machine: pct(last.machine.busy - first.machine.busy),
      apiEventLoop: pct(last.apiMain - first.apiMain),
      apiOtherThreads: pct(last.apiAll - first.apiAll - (last.apiMain - first.apiMain)),
      postgres: pct(postgresDelta(first.postgres, last.postgres)),
      generator: pct(last.generator - first.generator),
    };
  };
}

export type CpuUse = ReturnType<ReturnType<typeof cpuMeter>>;

/** Cores' worth of CPU the machine spent over `ms` before we start anything: other people's work. */
export async function machineBusyBefore(ms: number): Promise<number> {
  const first = machineTicks();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const last = machineTicks();
  return (last.busy - first.busy) / TICKS_PER_SECOND / ((performance.now() - started) / 1000);
}
