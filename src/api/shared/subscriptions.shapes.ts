import { z } from 'zod';
import type { ApplicationRow } from '../../domain/applications/applications.service.js';
import type { SubscriptionRow } from '../../domain/subscriptions/subscriptions.service.js';
import { formatTimestamp } from './time.js';

const timestamp = z.string().meta({ example: '2024-03-01 09:30:00' });

/** Application (spec 2): `planId` in the current version only. */
export const ApplicationRecord = z.object({ name: z.string(), planId: z.string() }).meta({ example: { name: 'forecast', planId: 'basic' } });
export const OlderApplicationRecord = z.object({ name: z.string() }).meta({ example: { name: 'forecast' } });

export const applicationRecord = (app: ApplicationRow): z.output<typeof ApplicationRecord> => ({ name: app.name, planId: app.plan_id });
export const olderApplicationRecord = (app: ApplicationRow): z.output<typeof OlderApplicationRecord> => ({ name: app.name });

const olderFields = {
  name: z.string(),
  status: z.enum(['subscribed', 'unsubscribed']),
  subscription_date: timestamp,
  unsubscription_date: timestamp.optional(),
};

/** Older Subscription record: name, status, dates; `unsubscription_date` only once unsubscribed. */
export const OlderSubscriptionRecord = z
  .object(olderFields)
  .meta({ example: { name: 'forecast', status: 'unsubscribed', subscription_date: '2024-03-01 09:30:00', unsubscription_date: '2024-04-01 18:00:00' } });

/** Current Subscription record adds the subscriber, and (additions) the subscription id and plan. */
export const SubscriptionRecord = z
  .object({ ...olderFields, user: z.object({ id: z.number().int(), name: z.string() }), id: z.number().int(), planId: z.string() })
  .meta({
    example: { name: 'forecast', status: 'subscribed', subscription_date: '2024-03-01 09:30:00', user: { id: 12, name: 'Ana' }, id: 7, planId: 'basic' },
  });

/** The id of a subscription (POST and PATCH in the current version, PATCH in the older). */
export const SubscriptionId = z.number().int().meta({ example: 7 });

export function olderSubscriptionRecord(row: SubscriptionRow, tz: string): z.output<typeof OlderSubscriptionRecord> {
  const record: z.output<typeof OlderSubscriptionRecord> = {
    name: row.app_name,
    status: row.unsubscribed_at === null ? 'subscribed' : 'unsubscribed',
    subscription_date: formatTimestamp(row.subscribed_at, tz),
  };
  if (row.unsubscribed_at !== null) record.unsubscription_date = formatTimestamp(row.unsubscribed_at, tz);
  return record;
}

export function subscriptionRecord(row: SubscriptionRow, tz: string): z.output<typeof SubscriptionRecord> {
  return {
    ...olderSubscriptionRecord(row, tz),
    user: { id: row.user_id, name: row.user_name },
    id: row.id,
    planId: row.plan_id,
  };
}
