import { createReadStream } from 'node:fs';
import type { EmbeddedPostgres } from './pglite-create.js';

/** Blocks of whole lines (each ends with a line break) of at most about `size` bytes, from a file. */
export async function* lineBatches(file: string, size: number): AsyncGenerator<Buffer> {
  let carry: Buffer | undefined;
  for await (const raw of createReadStream(file, { highWaterMark: size })) {
    const chunk = carry ? Buffer.concat([carry, raw as Buffer]) : (raw as Buffer);
    const cut = chunk.lastIndexOf(10);
    if (cut === -1) {
      carry = chunk;
      continue;
    }
    yield chunk.subarray(0, cut + 1);
    carry = cut + 1 < chunk.length ? chunk.subarray(cut + 1) : undefined;
  }
  if (carry && carry.length > 0) yield carry;
}

/** What copies a file into the embedded database a batch at a time: the worker thread does it itself (pglite-worker.ts). */
export interface FileCopier {
  copyFile(copySql: string, file: string, batchBytes: number): Promise<void>;
}

export const copiesFiles = (pglite: EmbeddedPostgres): pglite is EmbeddedPostgres & FileCopier => typeof (pglite as Partial<FileCopier>).copyFile === 'function';

/**
 * Runs `copySql` (a COPY ... FROM '/dev/blob') once per batch of whole lines of `file`, each batch on
 * the database's one connection alone, so that other requests run between batches. In the worker
 * thread the batches follow each other there (no round trip between the threads a batch; a request
 * that arrives waits for the batch under way; pglite-host.ts). On this thread (PGLITE_IN_WORKER=0) each takes the
 * connection through `exclusive` (the Kysely dialect's line) and a turn of the event loop follows it.
 */
export async function copyFileInBatches(
  pglite: EmbeddedPostgres,
  exclusive: <T>(work: () => Promise<T>) => Promise<T>,
  copySql: string,
  file: string,
  batchBytes: number,
): Promise<void> {
  if (copiesFiles(pglite)) return pglite.copyFile(copySql, file, batchBytes);
  for await (const batch of lineBatches(file, batchBytes)) {
    await exclusive(() => pglite.query(copySql, [], { blob: new Blob([batch]) }));
    await new Promise((resolve) => setImmediate(resolve));
  }
}
