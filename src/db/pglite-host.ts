/**
 * The embedded database's thread (pglite-worker.ts starts it): owns the PGlite instance and runs each
 * call the API thread posts, in arrival order (PGlite runs one at a time), so its CPU never holds the
 * API's event loop. Loads PGlite and nothing else.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
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

async function answer(pglite: PGlite, call: HostCall): Promise<HostReply> {
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
  port.on('message', (call: HostCall) => {
    void answer(pglite, call).then(
      (reply) => {
        try {
          port.postMessage(reply);
        } catch (error) {
          // A value that cannot be cloned (none of PGlite's parsers make one): the caller still gets an answer.
          port.postMessage({ id: call.id, ok: false, error: wireError(error) } satisfies HostReply);
        }
        // Closed: nothing else is coming; the thread ends with its port.
        if (call.op === 'close') port.close();
      },
      (error: unknown) => port.postMessage({ id: call.id, ok: false, error: wireError(error) } satisfies HostReply),
    );
  });
  port.postMessage({ ready: true } satisfies HostReply);
}

// Not a top-level await: under tsx the thread loads this file through require (pglite-worker.ts).
void serve();
