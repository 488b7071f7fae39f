/**
 * The embedded database's thread (pglite-worker.ts starts it): owns the PGlite instance and runs the
 * calls the API thread posts one at a time, in arrival order, so its CPU never holds the API's event
 * loop. A file copy (copyFile) runs a batch at a time whenever no call waits and no transaction is
 * open: a call waits at most for the batch under way, and a batch never lands inside another
 * request's transaction. Loads PGlite and nothing else.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { lineBatches } from './pglite-copy.js';
import { createPGlite, type EmbeddedOpenOptions } from './pglite-create.js';
import type { HostCall, HostReply, WireError } from './pglite-worker.js';

const port = parentPort!;

/** The fields the service reads on a database error (code above all: errors.ts, data.service.ts), as plain data. */
function wireError(error: unknown): WireError {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields: Record<string, unknown> = { ...error };
  const wire: WireError = { message: error.message, name: error.name, stack: error.stack };
  for (const [key, value] of Object.entries(fields)) if (typeof value === 'string' || typeof value === 'number') wire[key] = value;
  return wire;
}

type Call = Exclude<HostCall, { op: 'copyFile' }>;

async function answer(pglite: PGlite, call: Call): Promise<HostReply> {
  switch (call.op) {
    case 'query': {
      const result = await pglite.query(call.sql, call.params, call.blob ? { blob: call.blob } : undefined);
      return { id: call.id, ok: true, value: { rows: result.rows, affectedRows: result.affectedRows, blob: result.blob } };
    }
    case 'exec': {
      const results = await pglite.exec(call.sql);
      return { id: call.id, ok: true, value: results.map((r) => ({ rows: r.rows, affectedRows: r.affectedRows })) };
    }
    case 'dump': {
      // A File does not cross threads as one (it arrives a Blob): send it as a Blob, which shares its bytes.
      const dump = await pglite.dumpDataDir(call.compression);
      return { id: call.id, ok: true, value: new Blob([dump]) };
    }
    case 'close':
      await pglite.close();
      return { id: call.id, ok: true, value: undefined };
  }
}

interface Copy {
  id: number;
  sql: string;
  batches: AsyncGenerator<Buffer>;
}

function send(reply: HostReply): void {
  try {
    port.postMessage(reply);
  } catch (error) {
    // A value that cannot be cloned (none of PGlite's parsers make one): the caller still gets an answer.
    if ('id' in reply) port.postMessage({ id: reply.id, ok: false, error: wireError(error) } satisfies HostReply);
  }
}

/**
 * After answering a call, file copies leave the connection free this long before their next batch, once
 * a batch: a request's next statement (another query of the same request, a transaction's next step)
 * comes back within it and goes ahead of the batch instead of behind it, and requests back to back
 * still cannot hold a copy back for more than this a batch.
 */
const CALL_GRACE_MS = 2;

/** Calls in arrival order, and file copies (taking turns) in the gaps. */
function scheduler(pglite: PGlite) {
  const calls: Call[] = [];
  const copies: Copy[] = [];
  let running = false;
  let lastCall = 0;
  /** The copies already waited once since their last batch. */
  let graced = false;

  /** One batch of the first copy; the copy ends (answered) at its last batch or its first error. */
  async function step(copy: Copy): Promise<void> {
    try {
      const next = await copy.batches.next();
      if (next.done) {
        copies.splice(copies.indexOf(copy), 1);
        send({ id: copy.id, ok: true, value: undefined });
        return;
      }
      await pglite.query(copy.sql, [], { blob: new Blob([next.value]) });
      // Taking turns with other copies (uploads at the same time).
      copies.push(...copies.splice(copies.indexOf(copy), 1));
    } catch (error) {
      copies.splice(copies.indexOf(copy), 1);
      await copy.batches.return(undefined).catch(() => undefined);
      send({ id: copy.id, ok: false, error: wireError(error) });
    }
  }

  async function run(): Promise<void> {
    if (running) return;
    running = true;
    try {
      for (;;) {
        const call = calls.shift();
        if (call) {
          send(await answer(pglite, call).catch((error: unknown): HostReply => ({ id: call.id, ok: false, error: wireError(error) })));
          // Closed: nothing else is coming; the thread ends with its port.
          if (call.op === 'close') return port.close();
          lastCall = performance.now();
        } else if (copies[0] && !pglite.isInTransaction()) {
          const grace = lastCall + CALL_GRACE_MS - performance.now();
          if (grace > 0 && !graced) {
            graced = true;
            setTimeout(() => void run(), grace);
            return;
          }
          graced = false;
          await step(copies[0]);
        } else {
          return;
        }
      }
    } finally {
      running = false;
    }
  }

  return (call: HostCall) => {
    if (call.op === 'copyFile') copies.push({ id: call.id, sql: call.sql, batches: lineBatches(call.file, call.batchBytes) });
    else calls.push(call);
    void run();
  };
}

async function serve(): Promise<void> {
  let pglite: PGlite;
  try {
    pglite = await createPGlite(workerData as EmbeddedOpenOptions);
  } catch (error) {
    // The opener's wait ends with this error; the thread ends with its port.
    port.postMessage({ failed: wireError(error) } satisfies HostReply);
    port.close();
    return;
  }
  port.on('message', scheduler(pglite));
  port.postMessage({ ready: true } satisfies HostReply);
}

// Not a top-level await: under tsx the thread loads this file through require (pglite-worker.ts).
void serve();
