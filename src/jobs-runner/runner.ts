import { mkdir, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunConsumption } from '../domain/consumptions/consumptions.service.js';
import { explainSelection } from '../domain/jobs/explanation.js';
import { PART_STAGE, UNITS_DONE_ADVANCE, type ClaimedUnit, type JobPartsRepository } from '../domain/jobs/job-parts.repository.js';
import { ORPHANED_REASON, STALE_AFTER_MS, type ClaimedJob, type JobQueueRepository } from '../domain/jobs/job-queue.repository.js';
import { STAT_STATUS, type ClosedStatStatus } from '../domain/model-records/stat-status.js';
import type { RunStat } from '../domain/model-records/stats.service.js';
import type { EventLog } from '../domain/ports.js';
import { TRAINING_STATUS } from '../domain/trainings/training-status.js';
import { removeStaleSpoolFiles, spoolFileName } from '../spool-files.js';
import type { TrainingPool } from '../training/pool.js';
import type { TrainingLimits, TrainingSetReport, TrainingSpool } from '../training/training-set.js';
import type { JobUnit } from '../training/train.worker.js';
import { isTrainingError, type ForecastInterval, type TrainedModel, type TrainingParams, type TrainingProgress, type TrainingResult } from '../training/types.js';

/**
 * What the runner needs from the domain services. These are the same services the HTTP endpoints
 * use (data, app records, status records, networks, consumptions), so an external legacy trainer
 * writing over HTTP would leave the same records.
 */
export interface RunnerDeps {
  queue: JobQueueRepository;
  /**
   * The queue of units (issue 34): with it, this runner claims jobs, parts of jobs in parts and their
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
  /** Stores the forecast rows (and each row's prediction intervals, kept out of the legacy view) as a new output. */
  writeOutput(jobId: number, header: string[], rows: Record<string, string>[], intervals?: (Record<string, ForecastInterval> | undefined)[]): Promise<number>;
  paramsForJob(jobId: number): Promise<TrainingParams>;
  /** Answers the stored model's id and its size in bytes (the consumption record's disk). */
  saveModel(trainingId: number, userId: number, model: TrainedModel): Promise<{ id: number; bytes: number }>;
  stats: {
    open(record: RunStat): Promise<number>;
    update(statId: number, change: { procedure?: string; text?: string; advance?: number }): Promise<unknown>;
    /** Closes the run's status record as Finished, Failed or Aborted. */
    terminate(statId: number, status: ClosedStatStatus, change: { text?: string; advance?: number }): Promise<unknown>;
  };
  recordConsumption(record: RunConsumption): Promise<void>;
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

const MB = 1024 * 1024;
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

  async function runJob(job: ClaimedJob): Promise<void> {
    const controller = new AbortController();
    running.set(controller, job.id);
    const startedAt = Date.now();
    // The training thread's own memory peak (pool.ts), not the process RSS the API and database share.
    let peakThreadBytes = 0;
    let advance = 0;
    let lastWrite = 0;
    let statId: number | undefined;
    const spoolPath = join(spoolDir, spoolFileName(`job-${job.id}.tsv`));
    const beat = beatWhile(controller, () => deps.queue.heartbeat(job.id, workerId));
    try {
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
          signal: controller.signal,
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
      await finishRun(job, workerId, {
        header: spool.header,
        result,
        set,
        statId,
        startedAt,
        phases: `training set export ${trainingStartedAt - exportStartedAt} ms, training thread ${trainingEndedAt - trainingStartedAt} ms`,
        ramBytes: peakThreadBytes,
        cpuSeconds: cpuSeconds ?? (trainingEndedAt - trainingStartedAt) / 1000,
        diskBytes: spool.bytes * 2,
        trainingEndedAt,
      });
    } catch (error) {
      if (stopping) {
        await deps.queue.handBack(job.id, workerId).catch(() => undefined);
        if (statId !== undefined) await deps.stats.terminate(statId, STAT_STATUS.Aborted, { text: 'handed back to the queue at shutdown' }).catch(() => undefined);
        return;
      }
      if (controller.signal.aborted || error instanceof AbortedElsewhere) {
        if (statId !== undefined) await deps.stats.terminate(statId, STAT_STATUS.Aborted, { text: `aborted at ${Math.round(advance)}%` }).catch(() => undefined);
        await deps.queue.setTrainingResult(job.training_id, { status: TRAINING_STATUS.Created }).catch(() => undefined);
        deps.observe?.('aborted', (Date.now() - startedAt) / 1000);
        await deps.events.record({ type: 2, procedure: 'training.abort', text: `Job ${job.id} aborted at ${Math.round(advance)}%`, host, pid: process.pid, userId: job.user_id });
        return;
      }
      const reason = isTrainingError(error) || error instanceof Error ? error.message : String(error);
      await deps.queue.fail(job.id, workerId, reason);
      deps.observe?.('failed', (Date.now() - startedAt) / 1000);
      await deps.queue.setTrainingResult(job.training_id, { status: TRAINING_STATUS.Failed }).catch(() => undefined);
      if (statId !== undefined) await deps.stats.terminate(statId, STAT_STATUS.Failed, { text: `failed: ${reason}` }).catch(() => undefined);
      await deps.events.record({ type: 4, procedure: 'training.fail', text: `Job ${job.id} failed: ${reason}`, host, pid: process.pid, userId: job.user_id });
    } finally {
      clearInterval(beat);
      running.delete(controller);
      await rm(spoolPath, { force: true }).catch(() => undefined);
    }
  }

  /** A trained job's result becomes its output, model, records and consumption; the job Finished. */
  async function finishRun(
    job: ClaimedJob,
    worker: string,
    run: { header: string[]; result: TrainingResult; set: TrainingSetReport | undefined; statId: number | undefined; startedAt: number; phases: string; ramBytes: number; cpuSeconds: number; diskBytes: number; trainingEndedAt: number },
  ): Promise<void> {
    const { result, set, statId } = run;
    const intervals = result.forecasts.some((f) => f.intervals) ? result.forecasts.map((f) => f.intervals) : undefined;
    const outputId = await deps.writeOutput(job.id, run.header, result.forecasts.map((f) => f.values), intervals);
    const { bytes: modelBytes } = await deps.saveModel(job.training_id, job.user_id, result.model);
    await deps.queue.setTrainingResult(job.training_id, {
      status: TRAINING_STATUS.Trained,
      neurons: result.figures.neurons,
      inputs: result.figures.inputs,
      outputs: result.figures.outputs,
      layers_requested: result.figures.layersRequested,
      layers_created: result.figures.layersCreated,
      success_rate: result.successRate,
    });
    const { inputs, outputs, neurons, layersCreated } = result.figures;
    const hidden = Array.from({ length: layersCreated }, () => Math.round(neurons / Math.max(1, layersCreated)));
    const finished = await deps.queue.finish(job.id, worker, [inputs, ...hidden, outputs].join('-'), result.selection);
    if (!finished) throw new AbortedElsewhere();
    // The run's own timing and hold-out figures, readable over GET /stat (bench/train reads them from here).
    const { timing: t, metrics: m } = result;
    const figures = `trained ${t.samples} samples x ${t.epochs} epochs in ${Math.round(t.trainMs)} ms (${Math.round(t.samplesEpochsPerSecond)} samples x epochs/s); hold-out of ${m.validationRows} rows: MAE ${m.mae.toPrecision(6)}, RMSE ${m.rmse.toPrecision(6)}, MSE ${(m.rmse ** 2).toPrecision(6)}, MAPE ${m.mape === null ? 'n/a' : `${m.mape.toFixed(2)}%`}, seasonal-naive MAE ${m.baselineMae.toPrecision(6)}`;
    // Which model won and why (result.selection), then the figures; bench/train parses the figures' fragment.
    if (statId !== undefined) {
      await deps.stats.terminate(statId, STAT_STATUS.Finished, {
        text: `finished: output ${outputId}, success rate ${result.successRate}%; ${explainSelection(result.selection)}; ${figures}${set ? `; ${describeSet(set)}` : ''}`,
        advance: 100,
      });
    }
    await deps.recordConsumption({
      userId: job.user_id,
      jobId: job.id,
      trainingId: job.training_id,
      appName: job.app_name,
      host,
      pid: process.pid,
      ramMb: round(run.ramBytes / MB),
      // The training threads' own CPU (thread-cpu.ts); their wall time where the platform cannot say, which
      // on a busy machine also counts the waits for a core.
      cpuSeconds: round(run.cpuSeconds),
      diskMb: round((modelBytes + run.diskBytes) / MB, 4),
    });
    const endedAt = Date.now();
    deps.observe?.('finished', (endedAt - run.startedAt) / 1000);
    // Where the time went, so a job that got slower says which phase did (issue 28's standing check).
    const phases = `${run.phases}, output and records ${endedAt - run.trainingEndedAt} ms`;
    await deps.events.record({ type: 2, procedure: 'training.finish', text: `Job ${job.id} finished in ${endedAt - run.startedAt} ms (success rate ${result.successRate}%; ${phases})`, host, pid: process.pid, userId: job.user_id });
  }

  /** One part of a job in parts (a global round, a group scored, the choice, a group refitted), its answer stored for the later stages. */
  async function runPart(unit: Extract<ClaimedUnit, { kind: 'part' }>): Promise<void> {
    const parts = deps.parts as JobPartsRepository;
    const controller = new AbortController();
    running.set(controller, unit.jobId);
    let peakThreadBytes = 0;
    const beat = beatWhile(controller, () => parts.heartbeatPart(unit.jobId, unit.part, workerId));
    try {
      const task = await unitOf(parts, unit);
      const ran = await deps.pool.runUnit(task, { signal: controller.signal, onThreadMemory: (bytes) => (peakThreadBytes = Math.max(peakThreadBytes, bytes)) }).catch((error: unknown) => {
        throw new PartFailed(error);
      });
      const stored = await withRetries(() => parts.completePart(unit.jobId, unit.part, workerId, { outcome: ran.outcome ?? 'null', cpuSeconds: ran.cpuSeconds, peakBytes: peakThreadBytes }));
      if (!stored) throw new AbortedElsewhere();
    } catch (error) {
      if (stopping) {
        await parts.handBackPart(unit.jobId, unit.part, workerId).catch(() => undefined);
        return;
      }
      // Aborted: the abort closed the job's records; taken away: another process runs the part now.
      if (controller.signal.aborted || error instanceof AbortedElsewhere) {
        await deps.events
          .record({ type: 2, procedure: 'training.abort', text: `Job ${unit.jobId}: part ${unit.part} stopped on ${workerId} (its job was aborted, or the part went to another process)`, host, pid: process.pid })
          .catch(() => undefined);
        return;
      }
      // The database failed under it: the part stops beating, so after the heartbeat bound any process runs it again.
      if (!(error instanceof PartFailed)) return;
      const reason = isTrainingError(error.cause) || error.cause instanceof Error ? error.cause.message : String(error.cause);
      const failed = await parts.failJob(unit.jobId, reason).catch(() => undefined);
      if (failed) {
        deps.observe?.('failed', 0);
        await deps.events.record({ type: 4, procedure: 'training.fail', text: `Job ${unit.jobId} failed in part ${unit.part}: ${reason}`, host, pid: process.pid, userId: failed.userId }).catch(() => undefined);
      }
    } finally {
      clearInterval(beat);
      running.delete(controller);
    }
  }

  /** What a part's thread runs: its task and the answers of the earlier stages it reads. */
  async function unitOf(parts: JobPartsRepository, unit: Extract<ClaimedUnit, { kind: 'part' }>): Promise<JobUnit> {
    switch (unit.stage) {
      case PART_STAGE.Round: {
        const global = await parts.globalTask(unit.jobId);
        if (global === null) throw new AbortedElsewhere();
        return { kind: 'round', global, round: Number(unit.task) };
      }
      case PART_STAGE.Score:
        return { kind: 'score', part: unit.task, rounds: await parts.stageOutcomes(unit.jobId, PART_STAGE.Round) };
      case PART_STAGE.Choose:
        return { kind: 'choose', task: unit.task, scores: await parts.stageOutcomes(unit.jobId, PART_STAGE.Score) };
      case PART_STAGE.Fit: {
        const scored = await parts.partOf(unit.jobId, Number(unit.task));
        const [choice] = await parts.stageOutcomes(unit.jobId, PART_STAGE.Choose);
        if (!scored?.outcome || choice === undefined) throw new AbortedElsewhere();
        return { kind: 'fit', part: scored.task, scores: scored.outcome, choice };
      }
    }
  }

  /** The last step of a job in parts: every part's answer put together on a training thread, then stored as a whole job's. */
  async function runAssembly(jobId: number): Promise<void> {
    const parts = deps.parts as JobPartsRepository;
    const controller = new AbortController();
    running.set(controller, jobId);
    const beat = beatWhile(controller, () => deps.queue.heartbeat(jobId, workerId));
    let job: (ClaimedJob & { startedAt: number }) | undefined;
    try {
      job = await parts.assemblyJob(jobId);
      const input = await parts.assemblyInput(jobId);
      if (!job || !input) throw new AbortedElsewhere();
      const assembling = Date.now();
      // The bar goes from where the units left it (UNITS_DONE_ADVANCE) to 99 as the assembly reads their answers
      // and puts the series together; its thread reports at most every 200 ms for a few seconds, so each is written.
      const claimed = job;
      const onProgress = (p: TrainingProgress) => {
        const advance = Math.round(100 * (UNITS_DONE_ADVANCE + ((99 - UNITS_DONE_ADVANCE) * Math.min(p.advance, 100)) / 100)) / 100;
        deps.queue.heartbeat(claimed.id, workerId, advance).catch(() => undefined);
        if (input.statId !== null) deps.stats.update(input.statId, { advance }).catch(() => undefined);
      };
      const ran = await deps.pool.runUnit({ kind: 'assemble', plan: input.plan, outcomes: input.outcomes, trainMs: assembling - job.startedAt }, { signal: controller.signal, onProgress });
      const trainingEndedAt = Date.now();
      await finishRun(job, workerId, {
        header: input.header,
        result: ran.result as TrainingResult,
        set: undefined,
        statId: input.statId ?? undefined,
        startedAt: job.startedAt,
        phases: `${input.parts} parts over the queue ${assembling - job.startedAt} ms, assembly ${trainingEndedAt - assembling} ms`,
        ramBytes: input.peakBytes,
        cpuSeconds: input.cpuSeconds + (ran.cpuSeconds ?? 0),
        diskBytes: input.outcomes.reduce((s, o) => s + o.length, 0),
        trainingEndedAt,
      });
      await parts.discardParts(jobId);
    } catch (error) {
      if (stopping || !(controller.signal.aborted || error instanceof AbortedElsewhere)) {
        // Stopping, or the database failed under the writes: the parts are stored, so any process assembles it again.
        await parts.releaseAssembly(jobId, workerId).catch(() => undefined);
        if (!stopping) await deps.events.record({ type: 3, procedure: 'training.assemble', text: `Job ${jobId}: its assembly failed and goes back to the queue: ${error instanceof Error ? error.message : String(error)}`, host, pid: process.pid }).catch(() => undefined);
      }
    } finally {
      clearInterval(beat);
      running.delete(controller);
    }
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
    const { failed } = await deps.queue.recoverStale(options.staleAfterMs);
    for (const id of failed) {
      await deps.events.record({ type: 4, procedure: 'training.recover', text: `Job ${id} failed: ${ORPHANED_REASON}`, host, pid: process.pid });
    }
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

class AbortedElsewhere extends Error {}

/** A part's training itself failed (its thread answered an error), as against the database around it. */
class PartFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('part failed', { cause });
  }
}

/** A write that must not be lost to a short database outage: three tries, a second apart. */
async function withRetries<T>(write: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= tries) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/** How the training set was cut, for the run's status record. */
function describeSet(set: TrainingSetReport): string {
  const cut = set.cap.rule === 'none' ? 'all rows' : `${set.known} known rows (${set.cap.rule}, cap ${set.cap.rows})`;
  return `training set: ${set.rows} rows uploaded, ${cut} and ${set.forecast} to forecast; memory estimate ${set.estimateMb} MB of ${set.budgetMb} MB`;
}

/** Creates the spool directory and removes training sets dead processes left there (spool-files.ts). */
async function prepareSpoolDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await removeStaleSpoolFiles(dir, /job-\d+\.tsv/);
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
