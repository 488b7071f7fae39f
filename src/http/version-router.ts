import type { FastifyInstance } from 'fastify';
import { CURRENT_VERSION, currentVersion, type VersionOptions } from '../api/202203010900/index.js';
import { OLDER_VERSION, olderVersion } from '../api/202111101200/index.js';
import type { Services } from '../services.js';

/**
 * Mounts each API version as its own prefixed scope. The older version answers at
 * `/202111101200/...` and also under `/api/202111101200/...`, because current front ends still use
 * that segment for some resources (spec 9.2).
 */
export async function registerVersions(app: FastifyInstance, services: Services, options: VersionOptions) {
  await app.register(currentVersion, { prefix: `/api/${CURRENT_VERSION}`, services, ...options });
  await app.register(olderVersion, { prefix: `/${OLDER_VERSION}`, services, ...options });
  await app.register(olderVersion, { prefix: `/api/${OLDER_VERSION}`, services, ...options });
}

export const VERSION_PREFIXES = [`/api/${CURRENT_VERSION}/`, `/${OLDER_VERSION}/`, `/api/${OLDER_VERSION}/`];
