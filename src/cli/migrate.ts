/**
 * `npm run migrate`: opens the configured database (DATABASE_URL, else the embedded one under DATA_DIR),
 * applies pending migrations and prints what ran. Exit code 0 done, 1 failed.
 */
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { migrate } from '../db/migrator.js';
import { createDatabaseEventLog } from '../domain/logs/event-log.js';
import { createLogsRepository } from '../domain/logs/logs.repository.js';
import { systemClock } from '../domain/ports.js';

async function main(): Promise<number> {
  let database: DatabaseHandle | undefined;
  try {
    const config = loadConfig();
    database = await openDatabase(config);
    const applied = await migrate(database);
    if (applied.length === 0) {
      process.stdout.write('Database is up to date; no migration to apply\n');
      return 0;
    }
    for (const name of applied) process.stdout.write(`applied ${name}\n`);
    process.stdout.write(`${applied.length} migration${applied.length === 1 ? '' : 's'} applied\n`);
    // Administrators see schema changes in GET /logs without shell access.
    await createDatabaseEventLog({ logs: createLogsRepository(database.db), clock: systemClock }).record({
      type: 2,
      procedure: 'migrate',
      text: `Migrations applied: ${applied.join(', ')}`,
    });
    return 0;
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : `Migration failed: ${(error as Error).message}`}\n`);
    return 1;
  } finally {
    await database?.close();
  }
}

void main().then((code) => {
  process.exitCode = code;
});
