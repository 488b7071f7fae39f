import type { FastifyInstance } from 'fastify';
import { Errors } from '../../domain/errors.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { patchSubscriptionParams } from './subscriptions.params.js';
import { SubscriptionId } from './subscriptions.shapes.js';

/** PATCH /subscriptions: the same wire contract in both versions. */
export function patchSubscriptionRoute(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'PATCH',
    url: '/subscriptions.php',
    auth: 'session',
    summary: 'Change a subscription (params: app=<name>,plan=<plan id>; administrators name the user); answers its id',
    params: patchSubscriptionParams,
    reply: SubscriptionId,
    async handler({ params, caller }) {
      const appName = params.params.app ?? params.app;
      if (appName === undefined) throw Errors.invalidParameter('params', "name the application, e.g. 'app=forecast,plan=premium'");
      return services.subscriptions.patch(caller, params.user, appName, { plan: params.params.plan });
    },
  });
}
