/**
 * The floor of the session check (issue 35): a plain Node HTTP server (no framework) doing what the
 * check cannot avoid: hash the presented token, one indexed lookup of the session joined to its enabled
 * user (the service's statement, prepared), and the same envelope as JSON. Anything the service spends
 * above this is its own overhead.
 *   floor.ts pg <postgres url>         pg pool of 10, a named (prepared) statement, like the service
 *   floor.ts pglite <pgdata dir>       PGlite opened on that data directory, on this thread
 * Prints "READY <port> none" when listening.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const [kind, where] = process.argv.slice(2) as ['pg' | 'pglite', string];

const LOOKUP = `select s.id as session_id, s.last_seen_at < $1::timestamptz as needs_touch, u.id as user_id, u.role, u.name, u.lastname, u.email, u.client_id
from sessions as s inner join users as u on u.id = s.user_id
where s.token_hash = $2 and s.expires_at > $3::timestamptz and s.ended_at is null and u.is_enabled = true`;

type Row = { role: string; name: string };

async function lookupFunction(): Promise<(params: string[]) => Promise<Row | undefined>> {
  if (kind === 'pg') {
    const pool = new pg.Pool({ connectionString: where, max: 10 });
    return async (values) => (await pool.query<Row>({ name: 'floor.lookup', text: LOOKUP, values })).rows[0];
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create({ dataDir: where, startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] });
  return async (values) => (await db.query<Row>(LOOKUP, values)).rows[0];
}

async function main() {
  const lookup = await lookupFunction();
  const server = http.createServer((request, response) => {
    const token = new URL(request.url ?? '/', 'http://x').searchParams.get('session') ?? '';
    const now = Date.now();
    const params = [new Date(now - 60_000).toISOString(), createHash('sha256').update(token).digest('hex'), new Date(now).toISOString()];
    lookup(params).then(
      (row) => {
        const body = JSON.stringify(row ? { status: 0, data: { hash: token, user: { role: row.role, name: row.name } } } : { status: 1, data: 'Invalid or expired session' });
        response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        response.end(body);
      },
      (error: Error) => {
        response.writeHead(500).end(error.message);
      },
    );
  });
  // The service's keep-alive (KEEP_ALIVE_TIMEOUT_MS' default), so connections live alike.
  server.keepAliveTimeout = 75_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    console.log(`READY ${typeof address === 'object' && address ? address.port : 0} none`);
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
