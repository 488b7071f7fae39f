import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock } from '../ports.js';
import { ownerScope } from '../shared/access.js';
import { filterExpression } from '../shared/filter/index.js';
import {
  CONSUMPTION_COLUMNS,
  type ConsumptionListFilter,
  type ConsumptionRow,
  type ConsumptionsRepository,
} from './consumptions.repository.js';

export interface ConsumptionQuery extends Omit<ConsumptionListFilter, 'onlyUserId' | 'condition'> {
  /** The filter language over the Consumption's wire names. */
  filters?: string;
  tz: string;
}

/** One run's resource use, as the training engine reports it. */
export interface RunConsumption {
  userId: number;
  jobId?: number | null;
  trainingId?: number | null;
  appName: string;
  host: string;
  pid: number;
  /** Peak resident memory, MB. */
  ramMb: number;
  /** CPU time (user + system), seconds. */
  cpuSeconds: number;
  /** Data stored for the run, MB. */
  diskMb: number;
  /** When the run ended; defaults to now. */
  date?: Date;
}

export function createConsumptionsService(deps: { consumptions: ConsumptionsRepository; clock: Clock }) {
  const { consumptions, clock } = deps;
  const amount = (name: string, value: number) => {
    if (!Number.isFinite(value) || value < 0) throw Errors.invalidParameter(name, 'must be a non-negative number');
    return value;
  };

  return {
    /** Consumers see their own records, administrators everyone's. */
    async list(caller: Caller, query: ConsumptionQuery): Promise<ConsumptionRow[]> {
      const { filters, tz, ...filter } = query;
      return consumptions.list({
        ...filter,
        onlyUserId: ownerScope(caller),
        condition: filterExpression(filters, CONSUMPTION_COLUMNS, { parameter: 'filters', tz }),
      });
    },

    /** Called by the training engine once per run; answers the record id. */
    async record(run: RunConsumption): Promise<number> {
      return consumptions.insert({
        user_id: run.userId,
        job_id: run.jobId ?? null,
        training_id: run.trainingId ?? null,
        app_name: run.appName,
        host: run.host,
        pid: run.pid,
        ram: amount('ram', run.ramMb),
        cpu: amount('cpu', run.cpuSeconds),
        disk: amount('disk', run.diskMb),
        date: run.date ?? clock.now(),
      });
    },

    /** Marks every not yet invoiced record dated before `until` (exclusive) as invoiced now. */
    markInvoiced: (until: Date): Promise<number> => consumptions.markInvoicedBefore(until, clock.now()),

    markInvoicedIds: (ids: readonly number[]): Promise<number> => consumptions.markInvoicedIds(ids, clock.now()),
  };
}

export type ConsumptionsService = ReturnType<typeof createConsumptionsService>;
