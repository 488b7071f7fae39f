import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { accountsRoutes } from './accounts.routes.js';
import { chartsRoutes } from './charts.routes.js';
import { chatRoutes } from './chat.routes.js';
import { clientsRoutes } from './clients.routes.js';
import { dataRoutes } from './data.routes.js';
import { jobsRoutes } from './jobs.routes.js';
import { trainingsRoutes } from './trainings.routes.js';
import { logsRoutes } from './logs.routes.js';
import { modelsRoutes } from './models.routes.js';
import { promptsRoutes } from './prompts.routes.js';
import { sentencesRoutes } from './sentences.routes.js';
import { subscriptionsRoutes } from './subscriptions.routes.js';
import { usecasesRoutes } from './usecases.routes.js';

export const CURRENT_VERSION = '202203010900';

export interface VersionOptions {
  loginPerMinute: number;
}

/** Every resource of the current version, one line per area. */
export async function currentVersion(app: FastifyInstance, opts: { services: Services } & VersionOptions) {
  const { services } = opts;
  accountsRoutes(app, services, opts);
  jobsRoutes(app, services);
  trainingsRoutes(app, services);
  subscriptionsRoutes(app, services);
  logsRoutes(app, services);
  clientsRoutes(app, services);
  usecasesRoutes(app, services);
  chatRoutes(app, services);
  sentencesRoutes(app, services);
  promptsRoutes(app, services);
  modelsRoutes(app, services);
  dataRoutes(app, services);
  chartsRoutes(app, services);
}
