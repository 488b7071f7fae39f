/**
 * In-process notifications from the jobs service to a training runner living in the same process:
 * an abort stops the thread at once and a newly Pending job is claimed without waiting for a poll.
 * Runners in other processes learn the same through the database (heartbeat and polling).
 */
export function createJobSignals() {
  const aborted = new Set<(jobId: number) => void>();
  const queued = new Set<(jobId: number) => void>();
  return {
    onAbort: (jobId: number) => aborted.forEach((listener) => listener(jobId)),
    onQueued: (jobId: number) => queued.forEach((listener) => listener(jobId)),
    subscribe(listener: { aborted?: (jobId: number) => void; queued?: (jobId: number) => void }) {
      if (listener.aborted) aborted.add(listener.aborted);
      if (listener.queued) queued.add(listener.queued);
      return () => {
        if (listener.aborted) aborted.delete(listener.aborted);
        if (listener.queued) queued.delete(listener.queued);
      };
    },
  };
}

export type JobSignals = ReturnType<typeof createJobSignals>;
