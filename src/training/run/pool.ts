/**
 * Worker-thread pool for training (piscina), so the API event loop never runs brain.js.
 *
 * Abort: brain's train() is synchronous inside the worker, so it cannot observe a signal. Aborting a running
 * task makes piscina reject at once and terminate that worker thread (V8 interrupts the running JS); the
 * pool replaces the thread on demand. Queued tasks are just removed from the queue.
 *
 * Worker file: train.worker.js when compiled, the .ts under tsx/vitest (resolveWorkerFile).
 */
import { availableParallelism } from 'node:os';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { defaultYoungGenerationForNewThreads, resolveWorkerFile } from '../../workers-support.js';
import type { JobInParts } from './job-parts.js';
import type { JobUnit, WorkerProgress, WorkerReply, WorkerTask } from './train.worker.js';
import type { TrainingLimits, TrainingSetReport, TrainingSpool } from './training-set.js';
import { TrainingError, type TrainingInput, type TrainingParams, type TrainingProgress, type TrainingResult } from '../core/types.js';

export interface TrainingRunOptions {
  signal?: AbortSignal;
  onProgress?: (p: TrainingProgress) => void;
  /**
   * The training thread's memory peak so far, in bytes (its isolate's committed heap plus external and
   * ArrayBuffer memory), sampled with every progress report and once more at the end.
   */
  onThreadMemory?: (peakBytes: number) => void;
}

/**
 * A spool's training: the result (or, asked with minParts, the job in parts), how the set was cut, and the
 * training thread's CPU seconds (when known).
 */
export interface TrainedSpool {
  result: TrainingResult;
  parts?: JobInParts;
  set: TrainingSetReport | undefined;
  cpuSeconds: number | undefined;
}

/** A unit of a job in parts, run: its outcome text (rounds, parts) or the job's result (assembly). */
export interface RanUnit {
  outcome?: string;
  result?: TrainingResult;
  cpuSeconds: number | undefined;
}

export interface TrainingPool {
  train(input: TrainingInput, opts?: TrainingRunOptions): Promise<TrainingResult>;
  /**
   * Trains from a spool file the thread reads itself (training-set.ts): the rows never pass through the
   * caller's thread. Answers how the set was cut with the result.
   */
  trainSpool(
    spool: TrainingSpool,
    params: TrainingParams,
    limits: TrainingLimits,
    opts?: TrainingRunOptions & { minParts?: number },
  ): Promise<TrainedSpool>;
  /** Runs one unit of a job in parts (job-parts.ts) on a training thread. */
  runUnit(unit: JobUnit, opts?: TrainingRunOptions): Promise<RanUnit>;
  /**
   * Starts every thread the pool may have that is not running yet, without waiting: a thread's start (its
   * isolate and the engine's modules, ~0.3 s) then happens before the work arrives rather than on its path.
   * Settles once they have started; never rejects.
   */
  ready(): Promise<void>;
  close(): Promise<void>;
  readonly threads: number;
}

export interface TrainingPoolOptions {
  /** Default: CPU count - 1 (at least 1), leaving a core for the API. */
  maxThreads?: number;
  /** Idle worker threads exit after this many ms (default 60 s); they are re-created on demand. */
  idleTimeoutMs?: number;
  /**
   * Added to each training thread's nice value (piscina `niceIncrement` through @napi-rs/nice; on Linux
   * nice is per thread, so the event loop keeps its priority). Default 0; the server and worker pass
   * TRAINING_NICE (config.ts). A niced thread still runs at full speed on an otherwise idle core.
   */
  niceIncrement?: number;
  /**
   * Heap limit of each training thread in MB (piscina `resourceLimits.maxOldGenerationSizeMb`, from
   * TRAINING_MEMORY_MB). A thread that reaches it is ended by V8 (ERR_WORKER_OUT_OF_MEMORY) and its job
   * fails with the reason; the process keeps serving. Undefined: V8's default.
   */
  memoryMb?: number;
}

/** Piscina is loaded and the pool made by the first training: a process that trains nothing pays neither. */
export function createTrainingPool(options: TrainingPoolOptions = {}): TrainingPool {
  const maxThreads = Math.max(1, Math.floor(options.maxThreads ?? availableParallelism() - 1));
  let made: Promise<Piscina<WorkerTask, WorkerReply>> | undefined;
  let closed = false;
  const pool = () => {
    if (closed) throw new TrainingError('aborted', 'Training aborted: the training pool is closed');
    return (made ??= import('piscina').then(({ Piscina }) => {
      defaultYoungGenerationForNewThreads();
      const worker = resolveWorkerFile(import.meta.url, 'train.worker');
      return new Piscina<WorkerTask, WorkerReply>({
        filename: worker.filename,
        execArgv: worker.execArgv,
        minThreads: 0,
        maxThreads,
        idleTimeout: options.idleTimeoutMs ?? 60_000,
        niceIncrement: options.niceIncrement ?? 0,
        ...(options.memoryMb ? { resourceLimits: { maxOldGenerationSizeMb: options.memoryMb } } : {}),
      });
    }));
  };

  async function train(input: TrainingInput, opts: TrainingRunOptions = {}): Promise<TrainingResult> {
    return (await run({ input }, opts)).result as TrainingResult;
  }

  async function run(
    payload: { input: TrainingInput } | { spool: TrainingSpool; params: TrainingParams; limits: TrainingLimits; minParts?: number } | { unit: JobUnit } | { ready: true },
    opts: TrainingRunOptions,
  ): Promise<Extract<WorkerReply, { ok: true }>> {
    const { signal, onThreadMemory } = opts;
    if (signal?.aborted) throw new TrainingError('aborted', 'Training aborted');
    const onMessage = (m: WorkerProgress) => {
      opts.onProgress?.(m.progress);
      onThreadMemory?.(m.peakThreadBytes);
    };
    const listening = opts.onProgress !== undefined || onThreadMemory !== undefined;
    const channel = listening ? new MessageChannel() : null;
    if (channel) {
      channel.port1.on('message', onMessage);
      channel.port1.unref();
    }
    try {
      const task: WorkerTask = channel ? { ...payload, port: channel.port2 } : payload;
      const reply = await (await pool()).run(task, { signal, transferList: channel ? [channel.port2] : [] });
      if (channel) {
        // Results and progress travel on different channels; flush progress already queued (the final 100).
        for (let m = receiveMessageOnPort(channel.port1); m; m = receiveMessageOnPort(channel.port1)) {
          onMessage(m.message as WorkerProgress);
        }
      }
      if (!reply.ok) throw new TrainingError(reply.code, reply.message);
      onThreadMemory?.(reply.peakThreadBytes);
      return reply;
    } catch (error) {
      if (error instanceof TrainingError) throw error;
      if ((error as { code?: string } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new TrainingError('out_of_memory', `This training needs more than its memory budget of ${options.memoryMb ?? 'the default'} MB (its thread ran out of heap); set DataRowsToConsider lower or upload fewer rows`, { cause: error });
      }
      if (signal?.aborted || (error as Error | null)?.name === 'AbortError') {
        throw new TrainingError('aborted', 'Training aborted', { cause: error });
      }
      throw error;
    } finally {
      channel?.port1.close();
    }
  }

  return {
    train,
    async trainSpool(spool, params, limits, opts = {}) {
      const { minParts, ...runOptions } = opts;
      const reply = await run({ spool, params, limits, ...(minParts === undefined ? {} : { minParts }) }, runOptions);
      return { result: reply.result as TrainingResult, ...(reply.parts ? { parts: reply.parts } : {}), set: reply.set, cpuSeconds: reply.cpuSeconds };
    },
    async runUnit(unit, opts = {}) {
      const reply = await run({ unit }, opts);
      return { ...(reply.outcome === undefined ? {} : { outcome: reply.outcome }), ...(reply.result ? { result: reply.result } : {}), cpuSeconds: reply.cpuSeconds };
    },
    async ready() {
      if (closed) return;
      const piscina = await pool().catch(() => undefined);
      if (!piscina) return;
      // Piscina starts a thread for a task when none is idle, up to maxThreads: one task per missing thread.
      const missing = Array.from({ length: Math.max(0, maxThreads - piscina.threads.length) }, () => run({ ready: true }, {}).catch(() => undefined));
      await Promise.all(missing);
    },
    async close() {
      closed = true;
      await (await made)?.close();
    },
    threads: maxThreads,
  };
}
