import type { AccountsTables } from './tables/accounts.js';
import type { JobsTables } from './tables/jobs.js';
import type { LogsTables } from './tables/logs.js';
import type { SubscriptionsTables } from './tables/subscriptions.js';

/**
 * The whole schema as Kysely sees it: one interface per area under ./tables, merged here. Each area's
 * tables are written by hand beside its migration; test/schema.test.ts checks them against the
 * migrated database.
 */
export interface SchemaMigrationsTable {
  name: string;
  applied_at: Date;
}

export interface Database extends AccountsTables, JobsTables, SubscriptionsTables, LogsTables {
  schema_migrations: SchemaMigrationsTable;
}
