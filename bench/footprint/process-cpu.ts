/**
 * CPU seconds of a service process, split into its main thread (the API) and every other thread (the
 * training thread, the embedded database's thread since 274204b, V8's and libuv's helpers), from /proc
 * (Linux). A job's wall time on a shared machine moves with the other users' load; its CPU seconds do not,
 * so the benches print both (issue 28: a slower standing check was the machine's load, not the code;
 * docs/benchmarks.md, training-memory).
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';

/** USER_HZ, the unit of /proc's utime and stime: 100 on every Linux architecture node runs on. */
const TICKS_PER_SECOND = 100;

export interface ProcessCpu {
  main: number;
  others: number;
}

/** utime + stime of a /proc stat line, in seconds (fields 14 and 15; the command name may hold spaces). */
const statSeconds = (text: string) => {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
};

/** The process's CPU seconds so far; the process total includes threads that have exited. */
export async function processCpu(pid: number): Promise<ProcessCpu> {
  const [all, main] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/task/${pid}/stat`, 'utf8')]);
  const mainSeconds = statSeconds(main);
  return { main: mainSeconds, others: statSeconds(all) - mainSeconds };
}

/** CPU seconds between two readings, and the 1-minute load average now. */
export function cpuSince(before: ProcessCpu, after: ProcessCpu): ProcessCpu & { load: number } {
  return { main: after.main - before.main, others: after.others - before.others, load: loadavg()[0]! };
}

export const describeCpu = (cpu: ProcessCpu & { load: number }) =>
  `CPU main thread ${cpu.main.toFixed(1)} s, other threads ${cpu.others.toFixed(1)} s, load ${cpu.load.toFixed(1)}`;
