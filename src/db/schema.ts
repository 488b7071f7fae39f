import type { AccountsTables } from './tables/accounts.js';
import type { ChatTables } from './tables/chat.js';
import type { DataTables } from './tables/data.js';
import type { JobsTables } from './tables/jobs.js';
import type { LogsTables } from './tables/logs.js';
import type { ModelsTables } from './tables/models.js';
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

export interface Database extends AccountsTables, JobsTables, SubscriptionsTables, LogsTables, ChatTables, DataTables, ModelsTables {
  schema_migrations: SchemaMigrationsTable;
}
