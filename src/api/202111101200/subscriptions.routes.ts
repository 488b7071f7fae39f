import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { olderListSubscriptionsParams, subscribeParams } from '../shared/subscriptions.params.js';
import { patchSubscriptionRoute } from '../shared/subscriptions.routes.js';
import { OlderApplicationRecord, olderApplicationRecord, OlderSubscriptionRecord, olderSubscriptionRecord } from '../shared/subscriptions.shapes.js';
import { success } from '../../http/contract.js';

/**
 * Section 4.2 as the older version shapes it (spec 9.3): applications are `{name}`, subscriptions carry no
 * user object and no `tz`, subscribing answers `success`, and unsubscribing has no `user`: every caller
 * lists and unsubscribes its own subscriptions here.
 */
export function subscriptionsRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/applications.php',
    auth: 'session',
    summary: 'Applications one can subscribe to: [{name}]',
    params: z.object({}),
    reply: z.array(OlderApplicationRecord),
    async handler() {
      return (await services.applications.list()).map(olderApplicationRecord);
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/subscriptions.php',
    auth: 'session',
    summary: "The caller's subscriptions (dates in UTC unless tz is given)",
    params: olderListSubscriptionsParams,
    reply: z.array(OlderSubscriptionRecord),
    async handler({ params, caller }) {
      const rows = await services.subscriptions.list(caller, { search: params.search, status: params.status, ownOnly: true });
      return rows.map((row) => olderSubscriptionRecord(row, params.tz));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/subscriptions.php',
    auth: 'session',
    summary: 'Subscribe to an application; answers success',
    params: subscribeParams,
    reply: success,
    async handler({ params, caller }) {
      await services.subscriptions.subscribe(caller, params.app);
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/subscriptions.php',
    auth: 'session',
    summary: 'Unsubscribe the caller from an application',
    params: subscribeParams,
    reply: success,
    async handler({ params, caller }) {
      await services.subscriptions.unsubscribe(caller, params.app, caller.userId);
      return 'success';
    },
  });

  patchSubscriptionRoute(app, services);
}
