import { createRequire } from 'node:module';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { resolveWorkerFile } from '../workers-support.js';
import type { FileCopier } from './pglite-copy.js';
import type { EmbeddedOpenOptions, EmbeddedPostgres } from './pglite-create.js';

/** What the API thread asks of the embedded database's thread (pglite-host.ts). */
export type HostCall =
  | { id: number; op: 'query'; sql: string; params: unknown[] | undefined; blob: Blob | undefined }
  | { id: number; op: 'exec'; sql: string }
  | { id: number; op: 'dump'; compression: 'none' | 'gzip' | 'auto' | undefined }
  | { id: number; op: 'copyFile'; sql: string; file: string; batchBytes: number }
  | { id: number; op: 'close' };

/** An error as plain data: its message and every text or number field (code, severity, detail, position...). */
export interface WireError {
  message: string;
  name?: string;
  stack?: string;
  [field: string]: unknown;
}

export type HostReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError } | { ready: true } | { failed: WireError };

type Call = HostCall extends infer C ? (C extends HostCall ? Omit<C, 'id'> : never) : never;

/**
 * Codes the error path (src/http/errors.ts) answers as an unreachable database, 503 with Retry-After:
 * the thread is gone (connection_failure) or the database was closed (connection_does_not_exist).
 */
const STOPPED_CODE = '08006';
const CLOSED_CODE = '08003';

/**
 * The thread on pglite-host: the compiled .js, or from the TypeScript sources (tsx, vitest) the .ts
 * through tsx's require hook, as piscina loads the training worker: Node 20 applies tsx's import hooks
 * neither to a worker's entry file nor to what it imports.
 */
function hostWorker(options: WorkerOptions): Worker {
  const file = resolveWorkerFile(import.meta.url, 'pglite-host');
  if (!file.execArgv) return new Worker(file.filename, options);
  const tsxCjs = createRequire(import.meta.url).resolve('tsx/cjs');
  return new Worker(`require(${JSON.stringify(tsxCjs)}); require(${JSON.stringify(file.filename)});`, { ...options, eval: true, execArgv: file.execArgv });
}

function databaseError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * PGlite in a worker thread, behind the EmbeddedPostgres subset: a statement's CPU (a COPY batch, a
 * heavy query) runs beside the API's event loop instead of on it. Calls run in the order they were
 * made; file copies run between them (pglite-host.ts). Blobs cross without a copy of their bytes (Node
 * shares a Blob's data between threads). The thread keeps the process alive only while a call is under
 * way (PGlite in process held nothing open). A thread that stops (a crash, out of memory) rejects every
 * call under way and every later one with an error the error path answers as an unreachable database.
 * No resourceLimits: 4 or 8 MB young-generation limits changed its idle RSS by nothing measurable.
 */
export class PGliteWorker implements EmbeddedPostgres, FileCopier {
  readonly waitReady: Promise<void>;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; site: Error }>();
  private nextId = 0;
  private ready = false;
  /** Set once the thread is gone or closing: every later call is rejected with it. */
  private stopped: Error | undefined;
  private closing: Promise<void> | undefined;
  private readonly exited: Promise<number>;
  /**
   * Settles with the reason when the thread stops without close() (a crash, out of memory): the data
   * directory cannot be reopened safely in this process, so the server exits and a restart recovers it.
   */
  readonly lost: Promise<Error>;

  constructor(options: EmbeddedOpenOptions) {
    this.worker = hostWorker({ workerData: options });
    let settle!: { resolve: () => void; reject: (error: Error) => void };
    this.waitReady = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    // Whoever opens awaits it; a later stop must not also surface as an unhandled rejection.
    this.waitReady.catch(() => undefined);
    let fault: Error | undefined;
    let markLost!: (reason: Error) => void;
    this.lost = new Promise<Error>((resolve) => (markLost = resolve));
    this.worker.on('message', (reply: HostReply) => {
      if ('ready' in reply) {
        this.ready = true;
        settle.resolve();
        this.refWhileBusy();
      } else if ('failed' in reply) {
        fault = this.toError(reply.failed);
      } else {
        const call = this.pending.get(reply.id);
        if (!call) return;
        this.pending.delete(reply.id);
        this.refWhileBusy();
        if (reply.ok) call.resolve(reply.value);
        else call.reject(this.toError(reply.error, call.site));
      }
    });
    this.worker.on('error', (error) => (fault ??= error));
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        const reason = this.ready
          ? databaseError(`The embedded database's thread stopped (exit code ${code})${fault ? `: ${fault.message}` : ''}; restart the service`, STOPPED_CODE)
          : (fault ?? databaseError(`The embedded database's thread stopped while opening (exit code ${code})`, STOPPED_CODE));
        if (this.ready && !this.closing) markLost(reason);
        // A closed database keeps its own reason for later calls.
        this.stopped ??= reason;
        settle.reject(reason);
        for (const call of this.pending.values()) call.reject(reason);
        this.pending.clear();
        resolve(code);
      }),
    );
  }

  get closed(): boolean {
    return this.stopped !== undefined;
  }

  async query<T>(sql: string, params?: unknown[], options?: { blob?: Blob }): Promise<{ rows: T[]; affectedRows?: number; blob?: Blob }> {
    return (await this.call({ op: 'query', sql, params, blob: options?.blob })) as { rows: T[]; affectedRows?: number; blob?: Blob };
  }

  async exec(sql: string): Promise<unknown> {
    return this.call({ op: 'exec', sql });
  }

  async dumpDataDir(compression?: 'none' | 'gzip' | 'auto'): Promise<Blob> {
    return (await this.call({ op: 'dump', compression })) as Blob;
  }

  /** Runs `sql` (COPY ... FROM '/dev/blob') on each batch of whole lines of `file`, read by the thread itself (pglite-copy.ts). */
  async copyFile(sql: string, file: string, batchBytes: number): Promise<void> {
    await this.call({ op: 'copyFile', sql, file, batchBytes });
  }

  /** Closes PGlite (it writes what it must) and ends the thread; calls already made are answered first. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      const closing = this.stopped ? undefined : this.call({ op: 'close' });
      this.stopped ??= databaseError('The embedded database is closed', CLOSED_CODE);
      // Held until the thread is gone, whatever the caller does meanwhile.
      this.worker.ref();
      try {
        await closing;
      } finally {
        await this.worker.terminate();
        await this.exited;
      }
    })());
  }

  /** Ends the thread at once, as a crash would (tests). */
  async terminate(): Promise<void> {
    await this.worker.terminate();
    await this.exited;
  }

  private call(call: Call): Promise<unknown> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = ++this.nextId;
    // The caller's stack, for an error answered later from the other thread.
    const site = new Error();
    const answer = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject, site }));
    try {
      this.worker.postMessage({ ...call, id });
    } catch (error) {
      // A parameter that cannot be cloned: nothing was sent.
      this.pending.delete(id);
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    this.refWhileBusy();
    return answer;
  }

  /** Opening or a call under way keeps the process alive; an idle database does not. */
  private refWhileBusy(): void {
    if (this.closing) return;
    if (this.pending.size > 0 || !this.ready) this.worker.ref();
    else this.worker.unref();
  }

  private toError(wire: WireError, site?: Error): Error {
    const { message, name, stack, ...fields } = wire;
    const error = Object.assign(new Error(message), fields);
    if (name) error.name = name;
    const here = site?.stack?.split('\n').slice(1).join('\n');
    const there = stack?.split('\n').slice(1, 4).join('\n');
    error.stack = [`${name ?? 'Error'}: ${message}`, here, there && `    --- in the embedded database's thread:\n${there}`].filter(Boolean).join('\n');
    return error;
  }
}
