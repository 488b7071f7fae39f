import type { UsersRepository } from '../accounts/users.repository.js';
import type { ApplicationsService } from '../applications/applications.service.js';
import { isAdmin, type Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock } from '../ports.js';
import { ownerScope } from '../shared/access.js';
import type { SubscriptionListFilter, SubscriptionRow, SubscriptionsRepository } from './subscriptions.repository.js';

export type { SubscriptionRow };

/** What PATCH /subscriptions may change on an open subscription. */
export interface SubscriptionChanges {
  plan?: string;
}

export function createSubscriptionsService(deps: {
  subscriptions: SubscriptionsRepository;
  applications: ApplicationsService;
  users: UsersRepository;
  clock: Clock;
}) {
  const { subscriptions, applications, users, clock } = deps;

  /** Whose subscription an operation touches: administrators must name the user, others may only name themselves. */
  async function targetUser(caller: Caller, userId: number | undefined): Promise<number> {
    if (!isAdmin(caller)) {
      if (userId !== undefined && userId !== caller.userId) {
        throw Errors.notYourSubscription();
      }
      return caller.userId;
    }
    if (userId === undefined) throw Errors.missingParameter('user');
    if (userId !== caller.userId && !(await users.findById(userId))) throw Errors.notFound('User', userId);
    return userId;
  }

  const who = (caller: Caller, userId: number) => (userId === caller.userId ? 'You are' : `User ${userId} is`);

  return {
    /** Whether `userId` holds an open subscription to the application (jobs require one). */
    async isActive(userId: number, appName: string, parameter = 'app'): Promise<boolean> {
      const app = await applications.require(appName, parameter);
      const latest = await subscriptions.findLatest(userId, app.id);
      return latest !== undefined && latest.unsubscribed_at === null;
    },

    /** Administrators see everyone's unless `ownOnly`; consumers always only their own. */
    async list(caller: Caller, filter: Omit<SubscriptionListFilter, 'onlyUserId'> & { ownOnly?: boolean }): Promise<SubscriptionRow[]> {
      return subscriptions.listLatest({
        search: filter.search,
        status: filter.status,
        onlyUserId: filter.ownOnly ? caller.userId : ownerScope(caller),
      });
    },

    /** Opens a new period under the application's default plan; earlier periods stay as history. */
    async subscribe(caller: Caller, appName: string): Promise<number> {
      const app = await applications.require(appName);
      const id = await subscriptions.open(caller.userId, app.id, app.plan_id, clock.now());
      if (id === undefined) throw Errors.conflict(`You are already subscribed to '${app.name}'`);
      return id;
    },

    async unsubscribe(caller: Caller, appName: string, userId: number | undefined): Promise<number> {
      const target = await targetUser(caller, userId);
      const app = await applications.require(appName);
      const current = await subscriptions.findLatest(target, app.id);
      if (!current || current.unsubscribed_at !== null || !(await subscriptions.close(current.id, clock.now()))) {
        throw Errors.wrongState(`${who(caller, target)} not subscribed to '${app.name}'`);
      }
      return current.id;
    },

    async patch(caller: Caller, userId: number | undefined, appName: string, changes: SubscriptionChanges): Promise<number> {
      const target = await targetUser(caller, userId);
      const app = await applications.require(appName, 'params');
      if (changes.plan === undefined) throw Errors.invalidParameter('params', "nothing to update (give e.g. 'plan=premium')");
      const plan = await applications.requirePlan(changes.plan);
      const current = await subscriptions.findLatest(target, app.id);
      if (!current || current.unsubscribed_at !== null || !(await subscriptions.setPlan(current.id, plan.id, clock.now()))) {
        throw Errors.wrongState(`${who(caller, target)} not subscribed to '${app.name}'`);
      }
      return current.id;
    },

    /** GET /summaries `applications`: subscribed now vs. every other application. */
    countApplications: (userId: number) => subscriptions.countApplications(userId),
  };
}

export type SubscriptionsService = ReturnType<typeof createSubscriptionsService>;
