/**
 * Piscina worker entry: runs the synchronous engine on a worker thread. Progress goes to the MessagePort
 * transferred with the task (the piscina result channel only carries the final value). TrainingErrors are
 * returned as data because Error subclasses do not survive the structured clone across threads.
 *
 * A task carries either the rows themselves (`input`, small callers and tests) or a spool file
 * (`spool`, the runner): then this thread reads the training set itself (training-set.ts), so the
 * API's thread never holds it.
 */
import type { MessagePort } from 'node:worker_threads';
import { trainModel } from './engine.js';
import { threadCpuSeconds } from './thread-cpu.js';
import { loadTrainingSet, type TrainingLimits, type TrainingSetReport, type TrainingSpool } from './training-set.js';
import { TrainingError, type TrainingErrorCode, type TrainingInput, type TrainingParams, type TrainingProgress, type TrainingResult } from './types.js';

export type WorkerTask =
  | { input: TrainingInput; port?: MessagePort }
  | { spool: TrainingSpool; params: TrainingParams; limits: TrainingLimits; port?: MessagePort };

/** One message on the progress port: the engine's progress and the thread's memory peak so far. */
export interface WorkerProgress {
  progress: TrainingProgress;
  peakThreadBytes: number;
}

export type WorkerReply =
  /** cpuSeconds: this thread's CPU for reading the set and training, where the platform can say. */
  | { ok: true; result: TrainingResult; peakThreadBytes: number; cpuSeconds?: number; set?: TrainingSetReport }
  | { ok: false; code: TrainingErrorCode; message: string };

/**
 * What this thread's V8 isolate holds: its committed JS heap plus memory outside it (ArrayBuffers,
 * typed arrays). In a worker thread these figures are the isolate's own, unlike `rss`, which is the
 * whole process (the API and the embedded database included). The engine is synchronous, so it can
 * only be sampled where the engine reports: start, every progress report, end.
 */
const threadBytes = (): number => {
  const m = process.memoryUsage();
  return m.heapTotal + m.external;
};

export default async function train(task: WorkerTask): Promise<WorkerReply> {
  const { port } = task;
  const cpuAtStart = threadCpuSeconds();
  let peak = threadBytes();
  const onProgress = (progress: TrainingProgress) => {
    peak = Math.max(peak, threadBytes());
    port?.postMessage({ progress, peakThreadBytes: peak } satisfies WorkerProgress);
  };
  try {
    let input: TrainingInput;
    let set: TrainingSetReport | undefined;
    if ('spool' in task) {
      ({ input, report: set } = await loadTrainingSet(task.spool, task.params, task.limits));
      peak = Math.max(peak, threadBytes());
    } else input = task.input;
    const result = trainModel(input, { onProgress });
    const cpuAtEnd = threadCpuSeconds();
    const cpuSeconds = cpuAtStart === undefined || cpuAtEnd === undefined ? undefined : cpuAtEnd - cpuAtStart;
    return { ok: true, result, peakThreadBytes: Math.max(peak, threadBytes()), ...(cpuSeconds === undefined ? {} : { cpuSeconds }), ...(set ? { set } : {}) };
  } catch (error) {
    if (error instanceof TrainingError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}
