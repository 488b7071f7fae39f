/**
 * One in-process run of the engine on an upload, in a child process so that panels-ours.ts can kill it at the
 * time limit (the engine's trainModel runs to the end once started; a worker thread cannot be stopped inside
 * a tight loop any sooner than a process can).
 *   node --import tsx bench/forecast/panels-child.ts <upload.json> <result.json>
 * The wall time is taken around trainModel only: the child's start (tsx, imports) is not the engine's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { trainModel, type CandidateScore, type TrainingResult } from '../../src/training/index.js';
import { inputOf } from './datasets.js';
import type { Upload } from './panels-data.js';

/** What the parent reads back; `phases` and `panel` only when the engine reports them. */
export interface ChildResult {
  wallMs: number;
  rows: Record<string, string>[];
  phases?: Record<string, number>;
  panel?: unknown;
  outputs?: { column: string; chosen: string }[];
  /** The first output's candidates and notes (how the answer departs from the backtest's choice), for the tables that name them. */
  candidates?: CandidateScore[];
  notes?: string[];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [inFile, outFile] = process.argv.slice(2) as [string, string];
  const input = inputOf(JSON.parse(readFileSync(inFile, 'utf8')) as Upload);
  const started = performance.now();
  // Awaited in case the engine's entry point becomes asynchronous (spreading series over threads).
  const result: TrainingResult = await Promise.resolve(trainModel(input));
  const wallMs = performance.now() - started;
  const timing = result.timing as TrainingResult['timing'] & { phases?: Record<string, number> };
  const out: ChildResult = {
    wallMs,
    rows: result.forecasts.map((f) => f.values),
    ...(timing.phases ? { phases: timing.phases } : {}),
    ...(result.selection?.panel ? { panel: result.selection.panel } : {}),
    outputs: (result.selection?.outputs ?? []).map((o) => ({ column: o.column, chosen: o.description || o.chosen })),
    candidates: result.selection?.outputs[0]?.candidates ?? [],
    notes: result.selection?.outputs[0]?.notes ?? [],
  };
  writeFileSync(outFile, JSON.stringify(out));
}
