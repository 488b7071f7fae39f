/**
 * Piscina worker entry: runs the synchronous engine on a worker thread. Progress goes to the MessagePort
 * transferred with the task (the piscina result channel only carries the final value). TrainingErrors are
 * returned as data because Error subclasses do not survive the structured clone across threads.
 */
import type { MessagePort } from 'node:worker_threads';
import { trainModel } from './engine.js';
import { TrainingError, type TrainingErrorCode, type TrainingInput, type TrainingResult } from './types.js';

export interface WorkerTask {
  input: TrainingInput;
  port?: MessagePort;
}

export type WorkerReply =
  | { ok: true; result: TrainingResult }
  | { ok: false; code: TrainingErrorCode; message: string };

export default function train(task: WorkerTask): WorkerReply {
  const { port } = task;
  try {
    const result = trainModel(task.input, { onProgress: port ? (p) => port.postMessage(p) : undefined });
    return { ok: true, result };
  } catch (error) {
    if (error instanceof TrainingError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}
