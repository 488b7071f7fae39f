import type { ApplicationRow } from '../../domain/applications/applications.repository.js';
import type { SubscriptionRow } from '../../domain/subscriptions/subscriptions.repository.js';
import { formatTimestamp } from './time.js';

export const applicationRecord = (app: ApplicationRow) => ({ name: app.name, planId: app.plan_id });
export const olderApplicationRecord = (app: ApplicationRow) => ({ name: app.name });

/** Older Subscription record: name, status, dates; `unsubscription_date` only once unsubscribed. */
export function olderSubscriptionRecord(row: SubscriptionRow, tz: string) {
  const record: Record<string, unknown> = {
    name: row.app_name,
    status: row.unsubscribed_at === null ? 'subscribed' : 'unsubscribed',
    subscription_date: formatTimestamp(row.subscribed_at, tz),
  };
  if (row.unsubscribed_at !== null) record.unsubscription_date = formatTimestamp(row.unsubscribed_at, tz);
  return record;
}

/** Current Subscription record adds the subscriber, and (additions) the subscription id and plan. */
export function subscriptionRecord(row: SubscriptionRow, tz: string) {
  return {
    ...olderSubscriptionRecord(row, tz),
    user: { id: row.user_id, name: row.user_name },
    id: row.id,
    planId: row.plan_id,
  };
}
