import type { Piscina } from 'piscina';
import type { TopLevelSpec } from 'vega-lite';
import { defaultYoungGenerationForNewThreads, resolveWorkerFile } from '../../workers-support.js';
import { Errors } from '../errors.js';
import type { RenderTask } from './render.worker.js';

/**
 * Chart drawing on worker threads, since one heavy client must not hold up the others: a 10,000-row chart
 * takes a few hundred ms of synchronous compile, layout and rasterising, which on the request's thread
 * would stall every other request. Bounded in threads, queue, time and heap: past the queue a request is
 * refused at once with a retry hint rather than queued without end.
 */
export interface RenderPoolOptions {
  /** Threads drawing at once (default 1: the machine's other cores train and serve). */
  threads?: number;
  /** Charts waiting for a thread before further ones are refused (default 8). */
  queue?: number;
  /** A chart not drawn within this many ms, its wait included, is refused and its thread ended (default 20 s). */
  timeoutMs?: number;
  /** V8 heap limit of each drawing thread in MB (default 512); a thread past it is ended, the process keeps serving. */
  memoryMb?: number;
  /** Idle threads exit after this many ms and are re-created on demand (default 30 s). */
  idleTimeoutMs?: number;
}

export interface RenderPool {
  svg(panels: TopLevelSpec[], size: RenderTask['size'], at?: RenderTask['at']): Promise<string>;
  png(panels: TopLevelSpec[], size: RenderTask['size'], at?: RenderTask['at']): Promise<Buffer>;
  /** Ends the threads; a later chart starts a new pool. */
  close(): Promise<void>;
}

/** The pool is made on the first chart, so a process that draws none starts no thread and loads no Vega. */
export function createRenderPool(options: RenderPoolOptions = {}): RenderPool {
  const threads = Math.max(1, options.threads ?? 1);
  const queue = Math.max(0, options.queue ?? 8);
  const timeoutMs = options.timeoutMs ?? 20_000;
  const memoryMb = options.memoryMb ?? 512;
  let piscina: Promise<Piscina<RenderTask, string | Uint8Array>> | undefined;
  let inFlight = 0;
  // Recent drawing time (wait included), for the retry hint.
  let averageMs = 1000;

  // Piscina itself loads with the first chart too.
  const pool = () =>
    (piscina ??= import('piscina').then(({ Piscina }) => {
      defaultYoungGenerationForNewThreads();
      const worker = resolveWorkerFile(import.meta.url, 'render.worker');
      return new Piscina<RenderTask, string | Uint8Array>({
        filename: worker.filename,
        execArgv: worker.execArgv,
        minThreads: 0,
        maxThreads: threads,
        idleTimeout: options.idleTimeoutMs ?? 30_000,
        resourceLimits: { maxOldGenerationSizeMb: memoryMb },
      });
    }));

  async function draw(task: RenderTask): Promise<string | Uint8Array> {
    if (inFlight >= threads + queue) {
      const retry = Math.max(1, Math.ceil(((inFlight / threads) * averageMs) / 1000));
      throw Errors.unavailable(`the chart renderer is busy (${inFlight} charts drawing or waiting); try again in ${retry} seconds`);
    }
    inFlight++;
    const started = performance.now();
    try {
      return await (await pool()).run(task, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      if ((error as { code?: string } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw Errors.unavailable(`drawing this chart needs more than its memory budget of ${memoryMb} MB; ask for fewer rows (history) or a smaller size`);
      }
      if ((error as Error | null)?.name === 'AbortError') {
        throw Errors.unavailable(`drawing this chart took longer than ${timeoutMs / 1000} seconds; ask for fewer rows (history) or a smaller size, or try again later`);
      }
      throw error;
    } finally {
      inFlight--;
      averageMs = 0.8 * averageMs + 0.2 * (performance.now() - started);
    }
  }

  return {
    svg: async (panels, size, at) => (await draw({ panels, size, at, format: 'svg' })) as string,
    png: async (panels, size, at) => {
      const bytes = (await draw({ panels, size, at, format: 'png' })) as Uint8Array;
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    async close() {
      const closing = piscina;
      piscina = undefined;
      await (await closing)?.close();
    },
  };
}
