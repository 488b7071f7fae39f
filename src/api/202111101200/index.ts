import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { VersionOptions } from '../202203010900/index.js';
import { accountsRoutes } from './accounts.routes.js';
import { dataRoutes } from './data.routes.js';
import { forecastsRoutes } from './forecasts.routes.js';
import { jobsRoutes } from './jobs.routes.js';
import { subscriptionsRoutes } from './subscriptions.routes.js';

export const OLDER_VERSION = '202111101200';

/** Every resource of the older version (spec section 9), one line per area. */
export async function olderVersion(app: FastifyInstance, opts: { services: Services } & VersionOptions) {
  const { services } = opts;
  accountsRoutes(app, services, opts);
  jobsRoutes(app, services);
  subscriptionsRoutes(app, services);
  forecastsRoutes(app, services);
  dataRoutes(app, services);
}
