import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ApplicationsTable, SubscriptionsTable } from '../../db/tables/subscriptions.js';
import { escapeLike } from '../../db/escape-like.js';

/** A subscribed period with its user's and application's names. */
export type SubscriptionRow = Omit<Selectable<SubscriptionsTable>, 'updated_at'> & {
  /** The user's name and lastname. */
  user_name: string;
  app_name: Selectable<ApplicationsTable>['name'];
};

export interface SubscriptionListFilter {
  onlyUserId?: number;
  /** Partial, case-insensitive match on the application name. */
  search?: string;
  status?: 'subscribed' | 'unsubscribed';
}

export function createSubscriptionsRepository(db: Kysely<Database>) {
  const withNames = () =>
    db
      .selectFrom('subscriptions as s')
      .innerJoin('applications as a', 'a.id', 's.application_id')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select([
        's.id',
        's.user_id',
        sql<string>`trim(u.name || ' ' || u.lastname)`.as('user_name'),
        's.application_id',
        'a.name as app_name',
        's.plan_id',
        's.subscribed_at',
        's.unsubscribed_at',
      ]);

  return {
    /** The latest period of each (user, application): what the user's subscription is now. */
    async listLatest(filter: SubscriptionListFilter): Promise<SubscriptionRow[]> {
      let query = withNames()
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('subscriptions as later')
                .select(sql`1`.as('one'))
                .whereRef('later.user_id', '=', 's.user_id')
                .whereRef('later.application_id', '=', 's.application_id')
                .whereRef('later.id', '>', 's.id'),
            ),
          ),
        )
        .orderBy('s.user_id')
        .orderBy('a.name');
      if (filter.onlyUserId !== undefined) query = query.where('s.user_id', '=', filter.onlyUserId);
      if (filter.search) query = query.where('a.name', 'ilike', `%${escapeLike(filter.search)}%`);
      if (filter.status === 'subscribed') query = query.where('s.unsubscribed_at', 'is', null);
      if (filter.status === 'unsubscribed') query = query.where('s.unsubscribed_at', 'is not', null);
      return query.execute();
    },

    async findLatest(userId: number, applicationId: number): Promise<SubscriptionRow | undefined> {
      return withNames()
        .where('s.user_id', '=', userId)
        .where('s.application_id', '=', applicationId)
        .orderBy('s.id', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    /** Opens a period; undefined when one is already open (the partial unique index decides races). */
    async open(userId: number, applicationId: number, planId: string, now: Date): Promise<number | undefined> {
      const row = await db
        .insertInto('subscriptions')
        .values({ user_id: userId, application_id: applicationId, plan_id: planId, subscribed_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['user_id', 'application_id']).where('unsubscribed_at', 'is', null).doNothing())
        .returning('id')
        .executeTakeFirst();
      return row?.id;
    },

    /** Closes an open period; false when it was closed meanwhile. */
    async close(id: number, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('subscriptions')
        .set({ unsubscribed_at: now, updated_at: now })
        .where('id', '=', id)
        .where('unsubscribed_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async setPlan(id: number, planId: string, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('subscriptions')
        .set({ plan_id: planId, updated_at: now })
        .where('id', '=', id)
        .where('unsubscribed_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Applications the user is subscribed to now, and all the others. */
    async countApplications(userId: number): Promise<{ subscribed: number; unsubscribed: number }> {
      const row = await db
        .selectFrom('applications as a')
        .select([
          (eb) => eb.fn.countAll<number>().as('total'),
          (eb) =>
            eb.fn
              .count<number>('a.id')
              .filterWhere((fb) =>
                fb.exists(
                  fb
                    .selectFrom('subscriptions as s')
                    .select(sql`1`.as('one'))
                    .whereRef('s.application_id', '=', 'a.id')
                    .where('s.user_id', '=', userId)
                    .where('s.unsubscribed_at', 'is', null),
                ),
              )
              .as('subscribed'),
        ])
        .executeTakeFirstOrThrow();
      return { subscribed: row.subscribed, unsubscribed: row.total - row.subscribed };
    },
  };
}

export type SubscriptionsRepository = ReturnType<typeof createSubscriptionsRepository>;
