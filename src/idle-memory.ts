import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

const MB = 1024 * 1024;
/** Event-loop utilisation under which an interval counts as quiet (timers, pollers, a trickle of requests). */
const QUIET_UTILIZATION = 0.05;
/** A young generation at or under this is already small: nothing to give back. */
const SMALL_NEW_SPACE = 4 * MB;

const newSpaceSize = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

/**
 * Gives the API thread's young generation back to the system once the process goes quiet (docs/benchmarks.md,
 * footprint).
 *
 * V8 grows the young generation (the semi-spaces) to its maximum, 16 MB each on 64-bit, while the start
 * allocates and again under load, and keeps it: it shrinks it only in a full collection made when less
 * than 1 MB/s was allocated since the collection before (over at least its last 5 s), and an idle
 * server makes no collection. So `npm start` ran with --max-semi-space-size=4, which kept idle RSS ~35 MB
 * lower but cost the session check ~17 us of CPU a request in scavenges (docs/benchmarks.md, sessions).
 * Instead the default size stays and this makes the collections itself: at the first quiet half second a
 * young-generation one (a millisecond or two: it starts V8's measure of the allocation rate from the
 * quiet), then after 6 quiet seconds a full one (20-40 ms, while nothing is being
 * served), which brings the young generation back to 1 MB. If V8 keeps it (something still allocates),
 * the next try waits one period longer each time, up to 2 minutes.
 *
 * `gc` is reached the way jest's leak detector does: exposed for one new context, then the flag is
 * turned off again so that threads started later do not see it.
 */
export function returnYoungGenerationWhenIdle(options: { intervalMs?: number; quietIntervals?: number } = {}): { stop(): void } {
  const intervalMs = options.intervalMs ?? 500;
  // V8 measures the allocation rate over at least its last 5 s (whole periods between collections): the
  // full collection comes more than 5 s after the young one, or it is refused.
  const quietIntervals = options.quietIntervals ?? 12;
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options?: { type: 'major' | 'minor' }) => void;
  v8.setFlagsFromString('--no-expose-gc');
  let last = performance.eventLoopUtilization();
  let quiet = 0;
  let refused = 0;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    quiet = performance.eventLoopUtilization(now, last).utilization < QUIET_UTILIZATION ? quiet + 1 : 0;
    last = now;
    if (quiet === 0 || newSpaceSize() <= SMALL_NEW_SPACE) return;
    if (quiet === 1) gc({ type: 'minor' });
    if (quiet < quietIntervals * (1 + refused)) return;
    const before = newSpaceSize();
    gc({ type: 'major' });
    refused = newSpaceSize() < before ? 0 : Math.min(refused + 1, Math.ceil((120_000 / intervalMs) / quietIntervals));
    quiet = 0;
    // The collection itself is not load: the next interval starts from here.
    last = performance.eventLoopUtilization();
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
