import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CURRENT, TZ, createDatabase, killAll, newConsumer, newJob, sleep, startApi, startWorker, waitFor, type FaultDatabase } from './support.js';

/**
 * A deploy or restart never waits on the slowest client. SIGTERM gives what is in flight
 * SHUTDOWN_GRACE_MS, then cuts what is still open (a stalled upload, an idle keep-alive connection)
 * and the process exits.
 */
const GRACE_MS = 1500;
/** Cutting connections, closing the database and the process's own exit. */
const SLACK_MS = 3000;

let db: FaultDatabase;
beforeAll(async () => {
  db = await createDatabase();
});
afterAll(async () => {
  await killAll();
  await db?.drop();
});

/** A socket whose 'close' is remembered. */
function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  return {
    socket,
    connected: new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject)),
    get received() {
      return received;
    },
    get closed() {
      return closed;
    },
  };
}

it.each(['postgres', 'embedded'])('an API process (%s database) exits within the grace of SIGTERM while a client holds an upload open', async (kind) => {
  // An empty DATABASE_URL is the README's default: the embedded database under DATA_DIR.
  const api = await startApi({ databaseUrl: kind === 'postgres' ? db.url : '', env: { SHUTDOWN_GRACE_MS: String(GRACE_MS) } });
  const port = Number(new URL(api.baseUrl).port);
  const consumer = await newConsumer(api.baseUrl);
  const jobId = await newJob(consumer);

  // The session and job id, then half a CSV, then nothing (the handler is inside the upload).
  const boundary = `----stall${randomBytes(6).toString('hex')}`;
  const fields = { session: consumer.session!, job_id: jobId, file: 1 };
  const head = Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  const body = `${head.join('')}--${boundary}\r\nContent-Disposition: form-data; name="Servicefile"; filename="stalled.csv"\r\nContent-Type: text/csv\r\n\r\nyear,month,x1,x2,demand\n2000,1,3,4,`;
  const stalled = connect(port);
  await stalled.connected;
  stalled.socket.write(`POST ${CURRENT}/data.php?tz=${TZ} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${Buffer.byteLength(body) + 1024 * 1024}\r\n\r\n${body}`);

  // A keep-alive connection left idle after its reply.
  const idle = connect(port);
  await idle.connected;
  idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await waitFor('the idle connection to be answered', async () => (idle.received.includes('"ok"') ? true : undefined), 5000, 20);
  await sleep(300);
  expect(stalled.closed).toBe(false);

  const signalled = Date.now();
  api.child.kill('SIGTERM');
  const code = await Promise.race([api.exited, sleep(GRACE_MS + SLACK_MS + 5000).then(() => 'still running')]);
  const tookMs = Date.now() - signalled;
  expect(code, api.output().slice(-2000)).toBe(0);
  expect(tookMs).toBeGreaterThanOrEqual(GRACE_MS - 100);
  expect(tookMs).toBeLessThan(GRACE_MS + SLACK_MS);
  expect(stalled.closed).toBe(true);
  expect(idle.closed).toBe(true);

  if (kind === 'postgres') {
    // The cut upload stored nothing.
    const [job] = await db.query<{ status: number }>('select status from jobs where id = $1', [jobId]);
    expect(Number(job!.status)).toBe(0);
  }
});

it('a worker answers its own probes and exits promptly on SIGTERM', async () => {
  const healthPort = 20_000 + Math.floor(Math.random() * 20_000);
  const worker = await startWorker({ databaseUrl: db.url, env: { SHUTDOWN_GRACE_MS: String(GRACE_MS), WORKER_HEALTH_PORT: String(healthPort) } });
  const probe = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${healthPort}${path}`, { signal: AbortSignal.timeout(5000) });
    return { http: res.status, envelope: (await res.json()) };
  };
  expect(await probe('/healthz')).toEqual({ http: 200, envelope: { status: 0, data: 'ok' } });
  expect(await probe('/readyz')).toEqual({ http: 200, envelope: { status: 0, data: 'ready' } });
  expect(await probe('/nothing')).toEqual({ http: 404, envelope: { status: 1, data: 'Unknown resource: GET /nothing' } });

  // An idle keep-alive connection to the probe port does not hold the exit either.
  const idle = connect(healthPort);
  await idle.connected;
  idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await waitFor('the probe to be answered', async () => (idle.received.includes('"ok"') ? true : undefined), 5000, 20);

  const signalled = Date.now();
  worker.child.kill('SIGTERM');
  const code = await Promise.race([worker.exited, sleep(GRACE_MS + SLACK_MS + 5000).then(() => 'still running')]);
  expect(code, worker.output().slice(-2000)).toBe(0);
  expect(Date.now() - signalled).toBeLessThan(GRACE_MS + SLACK_MS);
  expect(idle.closed).toBe(true);
});
