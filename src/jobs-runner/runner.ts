import { mkdir, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { UNITS_DONE_ADVANCE, type ClaimedUnit, type JobPartsRepository } from '../domain/jobs/job-parts.repository.js';
import { ORPHANED_REASON, STALE_AFTER_MS, STORING_LOST_TEXT, type ClaimedJob, type JobQueueRepository } from '../domain/jobs/job-queue.repository.js';
import { STAT_STATUS, type ClosedStatStatus } from '../domain/model-records/stat-status.js';
import type { RunStat } from '../domain/model-records/stats.service.js';
import type { EventLog } from '../domain/ports.js';
import { TRAINING_STATUS } from '../domain/trainings/training-status.js';
import { removeStaleSpoolFiles, spoolFileName } from '../spool-files.js';
import type { CompletedRun } from '../domain/jobs/runs.service.js';
import { AbortedElsewhere, PartFailed, unitOf, withRetries } from './units.js';
import { isTrainingError, type TrainingLimits, type TrainingParams, type TrainingPool, type TrainingProgress, type TrainingResult, type TrainingSpool } from '../training/index.js';

/**
 * What the runner needs from the domain services. These are the same services the HTTP endpoints
 * use (data, app records, status records, networks, consumptions), so an external legacy trainer
 * writing over HTTP would leave the same records.
 */
export interface RunnerDeps {
  queue: JobQueueRepository;
  /**
   * The queue of units (a job in parts spread over every process): with it, this runner claims jobs, parts of jobs in parts and their
   * assembly, fairly between owners, and a panel of several parts is spread over every process; without
   * it (tests that build a runner by hand), jobs are claimed in id order and trained whole.
   */
  parts?: JobPartsRepository;
  pool: TrainingPool;
  events: EventLog;
  /**
   * Streams the job's input into a spool file at `path` for the training thread (the rows never sit in
   * this process's heap); answers its header, column roles and size.
   */
  spoolTrainingSet(jobId: number, path: string): Promise<Omit<TrainingSpool, 'path'> & { rows: number; bytes: number }>;
  /** Stores the column kinds the training thread detected (TrainingSpool.detect). */
  recordKinds(jobId: number, kinds: Record<string, 'numeric' | 'categorical'>): Promise<void>;
  paramsForJob(jobId: number): Promise<TrainingParams>;
  /**
   * Stores a run's output, model, records and consumption and marks its job Finished, all or nothing
   * (runs.service.ts); answers the output's id, or undefined when the job is no longer this worker's.
   */
  completeRun(run: CompletedRun): Promise<number | undefined>;
  stats: {
    open(record: RunStat): Promise<number>;
    update(statId: number, change: { procedure?: string; text?: string; advance?: number }): Promise<unknown>;
    /** Closes the run's status record as Failed or Aborted (a finished run's closes with its results). */
    terminate(statId: number, status: ClosedStatStatus, change: { text?: string; advance?: number }): Promise<unknown>;
  };
  /** Metrics hook: one call per run with its outcome and wall time. */
  observe?: (outcome: 'finished' | 'failed' | 'aborted', seconds: number) => void;
}

export interface RunnerOptions {
  /** Jobs trained at once by this process (the pool's threads). */
  concurrency: number;
  /** How often an idle runner looks for Pending jobs. */
  pollMs?: number;
  heartbeatMs?: number;
  /** How often this process looks for jobs orphaned by a dead worker. */
  recoverMs?: number;
  /** A running job whose heartbeat is older than this is orphaned (default STALE_AFTER_MS). */
  staleAfterMs?: number;
  /** Progress writes are throttled to one per this many ms. */
  progressMs?: number;
  /** Where training sets are spooled for the threads (DATA_DIR/training-spool); default the OS temp dir. */
  spoolDir?: string;
  /** Row cap and memory budget of one training (TRAINING_MAX_ROWS, TRAINING_MEMORY_MB). */
  limits?: TrainingLimits;
}

/** When no limits are given (tests that build a runner by hand): the configuration's defaults. */
export const DEFAULT_TRAINING_LIMITS: TrainingLimits = { maxRows: 100_000, budgetMb: 512 };

export interface Runner {
  readonly workerId: string;
  start(): void;
  /** Wakes the runner now (a job just became Pending in this process). */
  poke(): void;
  /** Stops a job this process is training, at once (abort from the API of this process). */
  abortLocal(jobId: number): void;
  /** Stops claiming, stops running trainings and hands their jobs back to the queue. */
  stop(): Promise<void>;
}

/** How often an idle runner looks again while a job trains anywhere (its units may be queued at any moment). */
const BUSY_POLL_MS = 100;
/** A panel is spread over the queue from this many parts; fewer are trained where they were planned. */
const MIN_PARTS = 2;

export function createRunner(deps: RunnerDeps, options: RunnerOptions): Runner {
  const host = hostname();
  const workerId = `${host}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const pollMs = options.pollMs ?? 1000;
  const heartbeatMs = options.heartbeatMs ?? 500;
  const recoverMs = options.recoverMs ?? 10_000;
  const progressMs = options.progressMs ?? 1000;
  /** Units this process runs, each with its job's id (abortLocal stops every unit of a job). */
  const running = new Map<AbortController, number>();
  let stopping = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let recoverTimer: NodeJS.Timeout | undefined;
  let inFlight = Promise.resolve();
  const active = new Set<Promise<unknown>>();
  const spoolDir = options.spoolDir ?? join(tmpdir(), 'mtcs-training-spool');
  const limits = options.limits ?? DEFAULT_TRAINING_LIMITS;
  const spoolReady = prepareSpoolDir(spoolDir);
  spoolReady.catch(() => undefined);

  /** Beats every heartbeatMs while a unit runs; the unit stops (controller) once the beat says it is no longer ours. */
  function beatWhile(controller: AbortController, beat: () => Promise<boolean>): NodeJS.Timeout {
    return setInterval(() => {
      beat().then(
        (owned) => {
          if (!owned) controller.abort();
        },
        () => undefined,
      );
    }, heartbeatMs);
  }

  /**
   * The one lifecycle of every unit this process runs (a job trained whole, a part of a job in parts, the
   * assembly of one): it is abortable (abortLocal, a beat that finds the unit no longer ours, stop), beats
   * while it runs, and ends in exactly one of its outcomes. Each kind of unit says only what its work is
   * and what each outcome means for it; nothing a unit's outcome writes may escape as an error.
   */
  async function runUnit(unit: {
    jobId: number;
    beat: () => Promise<boolean>;
    work: (signal: AbortSignal) => Promise<void>;
    /** The process is stopping: the unit goes back to the queue for another process. */
    handBack: () => Promise<void>;
    /** Aborted by its owner, or taken away (AbortedElsewhere): whoever did it closed the job's records. */
    aborted: () => Promise<void>;
    failed: (error: unknown) => Promise<void>;
    cleanUp?: () => Promise<void>;
  }): Promise<void> {
    const controller = new AbortController();
    running.set(controller, unit.jobId);
    const beat = beatWhile(controller, unit.beat);
    try {
      await unit.work(controller.signal);
    } catch (error) {
      const outcome = stopping ? unit.handBack() : controller.signal.aborted || error instanceof AbortedElsewhere ? unit.aborted() : unit.failed(error);
      await outcome.catch(() => undefined);
    } finally {
      clearInterval(beat);
      running.delete(controller);
      await unit.cleanUp?.().catch(() => undefined);
    }
  }

  /** A job trained whole here, or planned here and spread over the queue as parts. */
  function runJob(job: ClaimedJob): Promise<void> {
    const startedAt = Date.now();
    // The training thread's own memory peak (pool.ts), not the process RSS the API and database share.
    let peakThreadBytes = 0;
    let advance = 0;
    let lastWrite = 0;
    let statId: number | undefined;
    const spoolPath = join(spoolDir, spoolFileName(`job-${job.id}.tsv`));
    return runUnit({
      jobId: job.id,
      beat: () => deps.queue.heartbeat(job.id, workerId),
      async work(signal) {
        statId = await deps.stats.open({
          name: `train job ${job.id}`,
          host,
          pid: process.pid,
          parameters: JSON.stringify({ job_id: job.id, training_id: job.training_id, attempt: job.attempts }),
          jobId: job.id,
          userId: job.user_id,
        });
        await spoolReady;
        const exportStartedAt = Date.now();
        const spool = await deps.spoolTrainingSet(job.id, spoolPath);
        const params = await deps.paramsForJob(job.id);
        const trainingStartedAt = Date.now();
        const { result, parts, set, cpuSeconds } = await deps.pool.trainSpool(
          { path: spoolPath, header: spool.header, columns: spool.columns, detect: spool.detect },
          params,
          limits,
          {
            ...(deps.parts ? { minParts: MIN_PARTS } : {}),
            signal,
            onThreadMemory: (bytes) => (peakThreadBytes = Math.max(peakThreadBytes, bytes)),
            onProgress: (p) => {
              // Only rises: a panel's planning reports its share, and one trained here then counts its fits from 0.
              if (p.advance <= advance && p.advance < 100) return;
              advance = p.advance;
              const now = Date.now();
              if (now - lastWrite < progressMs && p.advance < 100) return;
              lastWrite = now;
              deps.queue.heartbeat(job.id, workerId, Math.min(99, Math.round(p.advance * 100) / 100)).catch(() => undefined);
              if (statId !== undefined) deps.stats.update(statId, { advance: p.advance, procedure: 'training' }).catch(() => undefined);
            },
          },
        );
        const trainingEndedAt = Date.now();
        if (set && Object.keys(set.kinds).length > 0) await deps.recordKinds(job.id, set.kinds);
        if (parts && deps.parts) {
          // A panel of several parts: its units go to the queue for every training thread of every process.
          const stored = await deps.parts.storePlan(job.id, job.user_id, workerId, {
            plan: parts.plan,
            header: spool.header,
            global: parts.global,
            statId,
            cpuSeconds,
            peakBytes: peakThreadBytes,
            rounds: Array.from({ length: parts.rounds }, () => ({ cost: parts.roundCost })),
            parts: parts.parts,
            choice: parts.choice,
          });
          if (!stored) throw new AbortedElsewhere();
          if (statId !== undefined) await deps.stats.update(statId, { procedure: 'training in parts', text: `planned in ${trainingEndedAt - trainingStartedAt} ms: ${parts.rounds} rounds of the global model, then ${parts.parts.length} parts scored, the choice across the series and the ${parts.parts.length} parts refitted` }).catch(() => undefined);
          await deps.events.record({ type: 2, procedure: 'training.plan', text: `Job ${job.id} planned in ${trainingEndedAt - startedAt} ms: ${parts.rounds} global rounds, ${parts.parts.length} parts to score, the choice and ${parts.parts.length} parts to refit queued`, host, pid: process.pid, userId: job.user_id });
          schedule(0);
          return;
        }
        await finishRun(
          { job, worker: workerId, header: spool.header, result, set, statId, host, pid: process.pid, ramBytes: peakThreadBytes, cpuSeconds: cpuSeconds ?? (trainingEndedAt - trainingStartedAt) / 1000, diskBytes: spool.bytes * 2 },
          { startedAt, trainingEndedAt, phases: `training set export ${trainingStartedAt - exportStartedAt} ms, training thread ${trainingEndedAt - trainingStartedAt} ms` },
        );
      },
      async handBack() {
        await deps.queue.handBack(job.id, workerId).catch(() => undefined);
        if (statId !== undefined) await deps.stats.terminate(statId, STAT_STATUS.Aborted, { text: 'handed back to the queue at shutdown' });
      },
      async aborted() {
        if (statId !== undefined) await deps.stats.terminate(statId, STAT_STATUS.Aborted, { text: `aborted at ${Math.round(advance)}%` }).catch(() => undefined);
        await deps.queue.setTrainingResult(job.training_id, { status: TRAINING_STATUS.Created }).catch(() => undefined);
        deps.observe?.('aborted', (Date.now() - startedAt) / 1000);
        await deps.events.record({ type: 2, procedure: 'training.abort', text: `Job ${job.id} aborted at ${Math.round(advance)}%`, host, pid: process.pid, userId: job.user_id });
      },
      async failed(error) {
        const reason = isTrainingError(error) || error instanceof Error ? error.message : String(error);
        await deps.queue.fail(job.id, workerId, reason);
        deps.observe?.('failed', (Date.now() - startedAt) / 1000);
        await deps.queue.setTrainingResult(job.training_id, { status: TRAINING_STATUS.Failed }).catch(() => undefined);
        if (statId !== undefined) await deps.stats.terminate(statId, STAT_STATUS.Failed, { text: `failed: ${reason}` }).catch(() => undefined);
        await deps.events.record({ type: 4, procedure: 'training.fail', text: `Job ${job.id} failed: ${reason}`, host, pid: process.pid, userId: job.user_id });
      },
      cleanUp: () => rm(spoolPath, { force: true }),
    });
  }

  /**
   * A trained job's results stored and the job Finished, in one transaction (runs.service.ts); the job is
   * marked as storing first, so a process that dies meanwhile leaves it to be queued again, never half done.
   */
  async function finishRun(run: CompletedRun, timing: { startedAt: number; trainingEndedAt: number; phases: string }): Promise<void> {
    if (!(await deps.queue.storing(run.job.id, run.worker))) throw new AbortedElsewhere();
    if ((await deps.completeRun(run)) === undefined) throw new AbortedElsewhere();
    const endedAt = Date.now();
    deps.observe?.('finished', (endedAt - timing.startedAt) / 1000);
    // Where the time went, so a job that got slower says which phase did (the parts benchmark reads it).
    const phases = `${timing.phases}, output and records ${endedAt - timing.trainingEndedAt} ms`;
    await deps.events.record({ type: 2, procedure: 'training.finish', text: `Job ${run.job.id} finished in ${endedAt - timing.startedAt} ms (success rate ${run.result.successRate}%; ${phases})`, host, pid: process.pid, userId: run.job.user_id });
  }

  /** One part of a job in parts (a global round, a group scored, the choice, a group refitted), its answer stored for the later stages. */
  function runPart(unit: Extract<ClaimedUnit, { kind: 'part' }>): Promise<void> {
    const parts = deps.parts as JobPartsRepository;
    let peakThreadBytes = 0;
    return runUnit({
      jobId: unit.jobId,
      beat: () => parts.heartbeatPart(unit.jobId, unit.part, workerId),
      async work(signal) {
        const task = await unitOf(parts, unit);
        const ran = await deps.pool.runUnit(task, { signal, onThreadMemory: (bytes) => (peakThreadBytes = Math.max(peakThreadBytes, bytes)) }).catch((error: unknown) => {
          throw new PartFailed(error);
        });
        const stored = await withRetries(() => parts.completePart(unit.jobId, unit.part, workerId, { outcome: ran.outcome ?? 'null', cpuSeconds: ran.cpuSeconds, peakBytes: peakThreadBytes }));
        if (!stored) throw new AbortedElsewhere();
      },
      handBack: () => parts.handBackPart(unit.jobId, unit.part, workerId),
      // Aborted: the abort closed the job's records; taken away: another process runs the part now.
      aborted: () =>
        deps.events.record({ type: 2, procedure: 'training.abort', text: `Job ${unit.jobId}: part ${unit.part} stopped on ${workerId} (its job was aborted, or the part went to another process)`, host, pid: process.pid }),
      async failed(error) {
        // The database failed under it: the part stops beating, so after the heartbeat bound any process runs it again.
        if (!(error instanceof PartFailed)) return;
        const reason = isTrainingError(error.cause) || error.cause instanceof Error ? error.cause.message : String(error.cause);
        const failed = await parts.failJob(unit.jobId, reason);
        if (failed) {
          deps.observe?.('failed', 0);
          await deps.events.record({ type: 4, procedure: 'training.fail', text: `Job ${unit.jobId} failed in part ${unit.part}: ${reason}`, host, pid: process.pid, userId: failed.userId });
        }
      },
    });
  }

  /** The last step of a job in parts: every part's answer put together on a training thread, then stored as a whole job's. */
  function runAssembly(jobId: number): Promise<void> {
    const parts = deps.parts as JobPartsRepository;
    // Stopping, or the database failed under the writes: the parts are stored, so any process assembles it again.
    const release = () => parts.releaseAssembly(jobId, workerId);
    return runUnit({
      jobId,
      beat: () => deps.queue.heartbeat(jobId, workerId),
      async work(signal) {
        const job = await parts.assemblyJob(jobId);
        const input = await parts.assemblyInput(jobId);
        if (!job || !input) throw new AbortedElsewhere();
        const assembling = Date.now();
        // The bar goes from where the units left it (UNITS_DONE_ADVANCE) to 99 as the assembly reads their answers
        // and puts the series together; its thread reports at most every 200 ms for a few seconds, so each is written.
        const onProgress = (p: TrainingProgress) => {
          const advance = Math.round(100 * (UNITS_DONE_ADVANCE + ((99 - UNITS_DONE_ADVANCE) * Math.min(p.advance, 100)) / 100)) / 100;
          deps.queue.heartbeat(job.id, workerId, advance).catch(() => undefined);
          if (input.statId !== null) deps.stats.update(input.statId, { advance }).catch(() => undefined);
        };
        const ran = await deps.pool.runUnit({ kind: 'assemble', plan: input.plan, outcomes: input.outcomes, trainMs: assembling - job.startedAt }, { signal, onProgress });
        const trainingEndedAt = Date.now();
        await finishRun(
          {
            job,
            worker: workerId,
            header: input.header,
            result: ran.result as TrainingResult,
            statId: input.statId ?? undefined,
            host,
            pid: process.pid,
            ramBytes: input.peakBytes,
            cpuSeconds: input.cpuSeconds + (ran.cpuSeconds ?? 0),
            diskBytes: input.outcomes.reduce((s, o) => s + o.length, 0),
          },
          { startedAt: job.startedAt, trainingEndedAt, phases: `${input.parts} parts over the queue ${assembling - job.startedAt} ms, assembly ${trainingEndedAt - assembling} ms` },
        );
        await parts.discardParts(jobId);
      },
      handBack: release,
      aborted: async () => undefined,
      async failed(error) {
        await release().catch(() => undefined);
        await deps.events.record({ type: 3, procedure: 'training.assemble', text: `Job ${jobId}: its assembly failed and goes back to the queue: ${error instanceof Error ? error.message : String(error)}`, host, pid: process.pid });
      },
    });
  }

  /** Claims until the pool is full or the queue empty, each unit in the background; answers how soon to look again. */
  async function fill(): Promise<number> {
    while (!stopping && running.size < options.concurrency) {
      const unit: ClaimedUnit | undefined = deps.parts ? await deps.parts.claimNext(workerId) : await deps.queue.claimNext(workerId).then((job) => (job ? { kind: 'job' as const, job } : undefined));
      // While a job trains or a job in parts runs anywhere, units appear at any moment (a plan is stored, a stage
      // ends, a part is reclaimed): a thread left idle a whole poll would cost the job up to that long each time.
      if (!unit) {
        if (!deps.parts || !(await deps.parts.inProgress())) return pollMs;
        // Work is planned or running elsewhere and will reach this process as units: its threads start now, not
        // when the first unit is claimed (on a worker that was idle, that start held up the job's first stage).
        if (running.size === 0) void deps.pool.ready();
        return BUSY_POLL_MS;
      }
      const run = unit.kind === 'job' ? runJob(unit.job) : unit.kind === 'part' ? runPart(unit) : runAssembly(unit.jobId);
      // A unit's own failure is recorded where it happens; what escapes (the database gone while it ended) must not end the process.
      const task = run.catch(() => undefined).finally(() => {
        active.delete(task);
        schedule(0);
      });
      active.add(task);
    }
    return pollMs;
  }

  function schedule(delay: number) {
    if (stopping) return;
    clearTimeout(pollTimer);
    pollTimer = setTimeout(() => {
      inFlight = inFlight.then(fill).then(
        (next) => schedule(next),
        () => schedule(pollMs),
      );
    }, delay);
  }

  async function recover() {
    const { failed, requeued } = await deps.queue.recoverStale(options.staleAfterMs);
    for (const id of failed) {
      await deps.events.record({ type: 4, procedure: 'training.recover', text: `Job ${id} failed: ${ORPHANED_REASON}`, host, pid: process.pid });
    }
    for (const id of requeued) {
      await deps.events.record({ type: 3, procedure: 'training.recover', text: `Job ${id}: ${STORING_LOST_TEXT}`, host, pid: process.pid });
    }
    if (requeued.length > 0) schedule(0);
    if (!deps.parts) return;
    const parts = await deps.parts.recoverStaleParts(options.staleAfterMs ?? STALE_AFTER_MS);
    for (const p of parts.requeued) {
      await deps.events.record({ type: 3, procedure: 'training.recover', text: `Job ${p.jobId}: part ${p.part} lost its worker and is queued again`, host, pid: process.pid });
    }
    for (const id of parts.failed) {
      await deps.events.record({ type: 4, procedure: 'training.recover', text: `Job ${id} failed: a part of it took its worker process down repeatedly`, host, pid: process.pid });
    }
    if (parts.requeued.length > 0) schedule(0);
  }

  return {
    workerId,
    start() {
      schedule(0);
      recoverTimer = setInterval(() => void recover().catch(() => undefined), recoverMs);
      recoverTimer.unref();
    },
    poke() {
      schedule(0);
    },
    abortLocal(jobId) {
      for (const [controller, id] of running) if (id === jobId) controller.abort();
    },
    async stop() {
      stopping = true;
      clearTimeout(pollTimer);
      clearInterval(recoverTimer);
      for (const controller of running.keys()) controller.abort();
      await inFlight.catch(() => undefined);
      await Promise.allSettled([...active]);
    },
  };
}

/** Creates the spool directory and removes training sets dead processes left there (spool-files.ts). */
async function prepareSpoolDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await removeStaleSpoolFiles(dir, /job-\d+\.tsv/);
}

