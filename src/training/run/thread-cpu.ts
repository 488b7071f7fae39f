import { readFileSync } from 'node:fs';

/**
 * CPU seconds (user + system) the calling thread has used, or undefined where the platform cannot say.
 * A job's consumption record wants the training thread's own CPU: its wall time counts every moment the
 * thread waited for a core on a busy machine (31 s of wall for 19.5 s of CPU at load 10), and the
 * process's cpuUsage counts the API's and the other jobs' threads too. Node >= 23.9 has
 * process.threadCpuUsage(); on Node 20 Linux gives the thread's own clock ticks in /proc/thread-self/stat
 * (fields 14 and 15, in USER_HZ, which is 100 on every Linux ABI).
 */
export function threadCpuSeconds(): number | undefined {
  const threadCpuUsage = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage;
  if (threadCpuUsage) {
    const { user, system } = threadCpuUsage.call(process);
    return (user + system) / 1e6;
  }
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
