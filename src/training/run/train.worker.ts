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
import { PLANNING_READ_SHARE, trainModel } from './engine.js';
import { assembleUnit, planTraining, runChooseUnit, runFitUnit, runRoundUnit, runScoreUnit, type JobInParts } from './job-parts.js';
import { threadCpuSeconds } from './thread-cpu.js';
import { loadTrainingSet, type TrainingLimits, type TrainingSetReport, type TrainingSpool } from './training-set.js';
import { TrainingError, type TrainingErrorCode, type TrainingInput, type TrainingParams, type TrainingProgress, type TrainingResult } from '../core/types.js';

/**
 * A unit of a job in parts (job-parts.ts): a round of the global model, a part's series scored, the
 * choice across the panel's series (from every part's scores), a part's series refitted (its task, its scores
 * and the choice), or the assembly.
 */
export type JobUnit =
  | { kind: 'round'; global: string; round: number }
  | { kind: 'score'; part: string; rounds: string[] }
  | { kind: 'choose'; task: string; scores: string[] }
  | { kind: 'fit'; part: string; scores: string; choice: string }
  | { kind: 'assemble'; plan: string; outcomes: string[]; trainMs: number };

export type WorkerTask =
  | { input: TrainingInput; port?: MessagePort }
  /** minParts: a panel of at least this many parts is answered in parts (JobInParts) instead of trained here. */
  | { spool: TrainingSpool; params: TrainingParams; limits: TrainingLimits; minParts?: number; port?: MessagePort }
  | { unit: JobUnit; port?: MessagePort }
  /** Nothing to run: the thread is started and its modules loaded, ready for the work a process sees coming (pool.ts ready). */
  | { ready: true; port?: MessagePort };

/** One message on the progress port: the engine's progress and the thread's memory peak so far. */
export interface WorkerProgress {
  progress: TrainingProgress;
  peakThreadBytes: number;
}

export type WorkerReply =
  /**
   * cpuSeconds: this thread's CPU for reading the set and training, where the platform can say. A job in
   * parts answers `parts` instead of a result; any other unit but the assembly answers its `outcome` text.
   */
  | { ok: true; result?: TrainingResult; parts?: JobInParts; outcome?: string; peakThreadBytes: number; cpuSeconds?: number; set?: TrainingSetReport }
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
  const cpu = () => {
    const cpuAtEnd = threadCpuSeconds();
    return cpuAtStart === undefined || cpuAtEnd === undefined ? {} : { cpuSeconds: cpuAtEnd - cpuAtStart };
  };
  try {
    if ('ready' in task) return { ok: true, peakThreadBytes: peak };
    if ('unit' in task) {
      const { unit } = task;
      const hooks = { onProgress };
      if (unit.kind === 'assemble') {
        const result = assembleUnit(unit.plan, unit.outcomes, unit.trainMs, hooks);
        return { ok: true, result, peakThreadBytes: Math.max(peak, threadBytes()), ...cpu() };
      }
      const outcome =
        unit.kind === 'round'
          ? runRoundUnit(unit.global, unit.round, hooks)
          : unit.kind === 'score'
            ? runScoreUnit(unit.part, unit.rounds, hooks)
            : unit.kind === 'choose'
              ? runChooseUnit(unit.task, unit.scores)
              : runFitUnit(unit.part, unit.scores, unit.choice, hooks);
      return { ok: true, outcome, peakThreadBytes: Math.max(peak, threadBytes()), ...cpu() };
    }
    let input: TrainingInput;
    let set: TrainingSetReport | undefined;
    if ('spool' in task) {
      // A job that may go into parts (the runner's) moves its bar while the set is read: the first steps of planning.
      let read = 0;
      const onRead =
        task.minParts === undefined
          ? undefined
          : (share: number) => {
              const advance = Math.floor(PLANNING_READ_SHARE * share);
              if (advance > read) onProgress({ epoch: advance, epochs: 100, error: 1, advance: (read = advance) });
            };
      ({ input, report: set } = await loadTrainingSet(task.spool, task.params, task.limits, onRead));
      peak = Math.max(peak, threadBytes());
    } else input = task.input;
    const planned = 'spool' in task && task.minParts !== undefined ? planTraining(input, { onProgress }, task.minParts, task.limits.partUnits) : { kind: 'result' as const, result: trainModel(input, { onProgress }) };
    const answer = planned.kind === 'result' ? { result: planned.result } : { parts: planned.job };
    return { ok: true, ...answer, peakThreadBytes: Math.max(peak, threadBytes()), ...cpu(), ...(set ? { set } : {}) };
  } catch (error) {
    if (error instanceof TrainingError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}
