import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { listSubscriptionsParams, subscribeParams, unsubscribeParams } from '../shared/subscriptions.params.js';
import { patchSubscriptionRoute } from '../shared/subscriptions.routes.js';
import { ApplicationRecord, applicationRecord, SubscriptionId, SubscriptionRecord, subscriptionRecord } from '../shared/subscriptions.shapes.js';
import { success } from '../../http/contract.js';

/** Section 4.2 of the current version: applications and subscriptions. */
export function subscriptionsRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/applications.php',
    auth: 'session',
    summary: 'Applications one can subscribe to: [{name, planId}]',
    params: z.object({}),
    reply: z.array(ApplicationRecord),
    async handler() {
      return (await services.applications.list()).map(applicationRecord);
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/subscriptions.php',
    auth: 'session',
    summary: "Subscriptions (administrators: everyone's, each with its user)",
    params: listSubscriptionsParams,
    reply: z.array(SubscriptionRecord),
    async handler({ params, caller }) {
      const rows = await services.subscriptions.list(caller, { search: params.search, status: params.status });
      return rows.map((row) => subscriptionRecord(row, params.tz));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/subscriptions.php',
    auth: 'session',
    summary: 'Subscribe to an application; answers the id of the new subscription',
    params: subscribeParams,
    reply: SubscriptionId,
    async handler({ params, caller }) {
      return services.subscriptions.subscribe(caller, params.app);
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/subscriptions.php',
    auth: 'session',
    summary: 'Unsubscribe from an application (administrators name the user)',
    params: unsubscribeParams,
    reply: success,
    async handler({ params, caller }) {
      await services.subscriptions.unsubscribe(caller, params.app, params.user);
      return 'success';
    },
  });

  patchSubscriptionRoute(app, services);
}
