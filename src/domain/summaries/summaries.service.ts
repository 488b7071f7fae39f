import { isAdmin, type Caller } from '../caller.js';
import { ownerScope } from '../shared/access.js';

export interface Summary {
  user: { name: string; lastname: string; email: string };
  applications?: { subscribed: number; unsubscribed: number };
  jobs: { running: number };
  knowledges: number;
  users?: { enabled: number; disabled: number };
}

/**
 * GET /summaries: counts across areas. Administrators get `users` and no `applications`; consumers
 * the reverse (spec 4.1). Counts a consumer sees are its own.
 */
export function createSummariesService(deps: { counters: SummaryCounters }) {
  return {
    async forCaller(caller: Caller): Promise<Summary> {
      const scopeUserId = ownerScope(caller);
      const [running, knowledges] = await Promise.all([
        deps.counters.runningJobs(scopeUserId),
        deps.counters.knowledges(scopeUserId),
      ]);
      const summary: Summary = {
        user: { name: caller.name, lastname: caller.lastname, email: caller.email },
        jobs: { running },
        knowledges,
      };
      if (isAdmin(caller)) summary.users = await deps.counters.users();
      else summary.applications = await deps.counters.subscriptions(caller.userId);
      return summary;
    },
  };
}

/** Each area contributes its count; an area not built yet answers zero. */
export interface SummaryCounters {
  users(): Promise<{ enabled: number; disabled: number }>;
  subscriptions(userId: number): Promise<{ subscribed: number; unsubscribed: number }>;
  runningJobs(userId: number | undefined): Promise<number>;
  knowledges(userId: number | undefined): Promise<number>;
}

export type SummariesService = ReturnType<typeof createSummariesService>;
