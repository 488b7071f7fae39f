import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { accountsRoutes } from './accounts.routes.js';

export const CURRENT_VERSION = '202203010900';

export interface VersionOptions {
  loginPerMinute: number;
}

/** Every resource of the current version, one line per area. */
export async function currentVersion(app: FastifyInstance, opts: { services: Services } & VersionOptions) {
  const { services } = opts;
  accountsRoutes(app, services, opts);
}
