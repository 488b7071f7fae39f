/**
 * One benchmark target per process, so the load generator and the server do not share a core:
 *   app     - our service (GET /sessions.php with a real session); with a third argument N, the session's
 *             user gets N jobs (GET /jobs.php, a list endpoint, for bench/contract)
 *   app-json - the same, each reply written by JSON.stringify instead of the contract serialiser (the
 *             serialiser switched off, as before issue 11's reply contract)
 *   static  - bare Fastify answering a static envelope (the framework's ceiling)
 *   lookup  - bare Fastify doing one indexed token-hash lookup with pg (the floor of any authenticated call)
 * Prints "READY <port> <session>" when listening.
 */
import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openPostgres } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';
import { createScryptHasher } from '../../src/domain/accounts/secrets.js';
import { systemClock } from '../../src/domain/ports.js';
import { createMailer } from '../../src/mail/mailer.js';
import { buildServices } from '../../src/services.js';

const [mode, databaseUrl, jobCount] = process.argv.slice(2) as ['app' | 'app-json' | 'static' | 'lookup', string, string | undefined];

async function main() {
  if (mode === 'static') {
    const app = Fastify();
    app.get('/sessions.php', async () => ({ status: 0, data: { hash: 'x', user: { role: 'consumer', name: 'x' } } }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    console.log(`READY ${new URL(address).port} none`);
    return;
  }
  if (mode === 'lookup') {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    const app = Fastify();
    app.get<{ Querystring: { session?: string } }>('/sessions.php', async (request) => {
      const hash = createHash('sha256').update(request.query.session ?? '').digest('hex');
      const { rows } = await pool.query(
        'select s.id, u.role, u.name from sessions s join users u on u.id = s.user_id where s.token_hash = $1 and s.ended_at is null and s.expires_at > now()',
        [hash],
      );
      const row = rows[0] as { role: string; name: string } | undefined;
      return row ? { status: 0, data: { hash: request.query.session, user: { role: row.role, name: row.name } } } : { status: 1, data: 'Invalid or expired session' };
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    console.log(`READY ${new URL(address).port} none`);
    return;
  }
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', WORKERS: '0', DATA_DIR: 'bench/.out/data' });
  const database = openPostgres(databaseUrl, { max: 10 });
  await migrate(database);
  const logger = pino({ level: 'warn' });
  const services = buildServices({
    config,
    database,
    mailer: createMailer({ smtpUrl: undefined, from: config.mailFrom, dataDir: config.dataDir, logger }),
    clock: systemClock,
    hasher: createScryptHasher(10),
    secretKey: 'bench-secret-key-0123456789abcdef0123456789',
  });
  const email = `bench-${Date.now()}@example.com`;
  await services.users.register({ name: 'Bench', lastname: 'User', email, password: 'Bench-Passw0rd', phone: '' });
  const { token } = await services.sessions.login(email, 'Bench-Passw0rd');
  if (jobCount) await seedJobs(database, email, Number(jobCount));
  const app = await buildApp({ config, services, logger });
  if (mode === 'app-json') {
    // A serialiser set on the reply takes precedence over the route's compiled one.
    app.addHook('onRequest', async (_request, reply) => void reply.serializer(JSON.stringify).header('x-serializer', 'JSON.stringify'));
  }
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(`READY ${new URL(address).port} ${token}`);
}

/** N trainings with one job each for the user, app names and statuses varied, as a front end's job list. */
async function seedJobs(database: ReturnType<typeof openPostgres>, email: string, count: number) {
  await database.pool!.query(
    `with u as (select id from users where email = $1),
     t as (insert into trainings (user_id, app_name) select u.id, 'forecast ' || g from u, generate_series(1, $2) g returning id, user_id, app_name)
     insert into jobs (user_id, training_id, app_name, status, nets) select user_id, id, app_name, id % 6, '12-24-24-1' from t`,
    [email, count],
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
