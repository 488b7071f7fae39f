import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock } from '../ports.js';
import { ownerScope } from '../shared/access.js';
import { requireJob, type OwnershipLookups } from '../shared/access.js';
import { isStatStatus, STAT_STATUS, type ClosedStatStatus } from './stat-status.js';
import type { StatChange, StatProcess, StatRecordRow, StatsRepository } from './stats.repository.js';

export type { StatRecordRow };

/** GET /stat: terminate 0 reads a job's records (progress_type 1 the count, 2 the records); otherwise a process's. */
export type StatQuery =
  | { terminate: 0; jobId: number; progressType: 1 | 2 }
  | { terminate: number; process: StatProcess; statusIn: number[] };

export interface NewStat {
  name: string;
  host: string;
  pid: number;
  parameters: string;
  caller?: string;
  text?: string;
  jobId?: number;
}

/** PATCH /stat: terminate 0 modifies the process's open record; 1, 2 or 3 closes it with that status. */
export interface StatPatch extends StatChange {
  process: StatProcess;
  terminate: number;
}

/** What the engine's runner opens for each run; it is trusted, so no caller scope applies. */
export interface RunStat extends NewStat {
  jobId: number;
  userId: number;
}

function checkAdvance(change: StatChange): void {
  if (change.advance !== undefined && !(change.advance >= 0 && change.advance <= 100)) {
    throw Errors.invalidParameter('advance', 'must be between 0 and 100');
  }
}

/** Status records of section 4.6: one per trainer run, found on the wire by name, host and pid. */
export function createStatsService(deps: { stats: StatsRepository; lookups: OwnershipLookups; clock: Clock }) {
  const { stats, lookups, clock } = deps;
  /** POST /stat and the runner open a record the same way; only the owner is decided differently. */
  const insert = (userId: number, input: NewStat): Promise<number> =>
    stats.insert(
      {
        user_id: userId,
        job_id: input.jobId ?? null,
        name: input.name,
        host: input.host,
        pid: input.pid,
        parameters: input.parameters,
        caller: input.caller ?? '',
        text: input.text ?? '',
      },
      clock.now(),
    );

  return {
    async list(caller: Caller, query: StatQuery): Promise<StatRecordRow[] | { total: number }> {
      const ownerId = ownerScope(caller);
      if (query.terminate === 0) {
        const { jobId, progressType } = query as Extract<StatQuery, { jobId: number }>;
        await requireJob(lookups, caller, jobId);
        return progressType === 1 ? { total: await stats.countForJob(jobId, ownerId) } : stats.listForJob(jobId, ownerId);
      }
      const { process, statusIn } = query as Extract<StatQuery, { process: StatProcess }>;
      const wrong = statusIn.find((code) => !isStatStatus(code));
      if (wrong !== undefined) throw Errors.invalidParameter('status', `${wrong} is not a status code (0 open, 1 finished, 2 failed, 3 aborted)`);
      return stats.listForProcess(process, statusIn, ownerId);
    },

    /** POST /stat: answers the new record's id. A record of a job belongs to the job's owner. */
    async create(caller: Caller, input: NewStat): Promise<number> {
      const owner = input.jobId === undefined ? caller.userId : (await requireJob(lookups, caller, input.jobId)).user_id;
      return insert(owner, input);
    },

    async patch(caller: Caller, input: StatPatch): Promise<void> {
      if (!isStatStatus(input.terminate)) {
        throw Errors.invalidParameter('terminate', 'must be 0 (modify), 1 (finished), 2 (failed) or 3 (aborted)');
      }
      const change: StatChange = { procedure: input.procedure, text: input.text, advance: input.advance };
      checkAdvance(change);
      const { name, host, pid } = input.process;
      const record = await stats.findOpen(input.process, ownerScope(caller));
      if (!record) throw Errors.notFound(`Open status record '${name}' of host '${host}' pid ${pid}`);
      const done =
        input.terminate === STAT_STATUS.Open
          ? await stats.update(record.id, change, clock.now())
          : await stats.terminate(record.id, input.terminate, change, clock.now());
      if (!done) throw Errors.wrongState(`Status record ${record.id} was terminated meanwhile`);
    },

    // --- for the engine's runner ---

    open: (run: RunStat): Promise<number> => insert(run.userId, run),

    /** False when the record is already terminated. */
    async update(id: number, change: StatChange): Promise<boolean> {
      checkAdvance(change);
      return stats.update(id, change, clock.now());
    },

    /**
     * Closes a run's record as 1 Finished, 2 Failed or 3 Aborted; false when it was already closed.
     * `executor`: the transaction that finishes the run, so the record reads Finished only with its output.
     */
    async terminate(id: number, status: ClosedStatStatus, change: StatChange = {}, executor?: Kysely<Database>): Promise<boolean> {
      checkAdvance(change);
      return stats.terminate(id, status, change, clock.now(), executor);
    },

    get: (id: number): Promise<StatRecordRow | undefined> => stats.findById(id),
  };
}

export type StatsService = ReturnType<typeof createStatsService>;
