import type { Generated } from 'kysely';

export interface PlansTable {
  id: string;
  description: Generated<string>;
  created_at: Generated<Date>;
}

export interface ApplicationsTable {
  id: Generated<number>;
  name: string;
  plan_id: string;
  created_at: Generated<Date>;
}

/** One row per subscribed period; open while `unsubscribed_at` is null. */
export interface SubscriptionsTable {
  id: Generated<number>;
  user_id: number;
  application_id: number;
  plan_id: string;
  subscribed_at: Generated<Date>;
  unsubscribed_at: Date | null;
  updated_at: Generated<Date>;
}

export interface SubscriptionsTables {
  plans: PlansTable;
  applications: ApplicationsTable;
  subscriptions: SubscriptionsTable;
}
