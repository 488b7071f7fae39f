import { PART_STAGE, type ClaimedUnit, type JobPartsRepository } from '../domain/jobs/job-parts.repository.js';
import type { JobUnit } from '../training/index.js';

// The units of a job in parts as the runner hands them to a training thread, and how their ends are told apart.

/** The unit is no longer this process's: its job was aborted, or another process took it. */
export class AbortedElsewhere extends Error {}

/** A part's training itself failed (its thread answered an error), as against the database around it. */
export class PartFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('part failed', { cause });
  }
}

/** A write that must not be lost to a short database outage: three tries, a second apart. */
export async function withRetries<T>(write: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= tries) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/** What a part's thread runs: its task and the answers of the earlier stages it reads. */
export async function unitOf(parts: JobPartsRepository, unit: Extract<ClaimedUnit, { kind: 'part' }>): Promise<JobUnit> {
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
