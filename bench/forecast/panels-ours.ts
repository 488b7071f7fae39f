/**
 * Ours on a panel upload (panels.ts, panel-speed.ts), bounded by a time limit so that an engine that reads a
 * panel as one table (slow) is reported as `timeout` instead of holding the run:
 *  - in-process (default): trainModel in a child process (panels-child.ts), killed at the limit;
 *  - through a real service (BENCH_PANELS_SERVICE=1): POST /data, wait for status 3, GET /data output=1, as
 *    corpus.ts does; a job past the limit gets its service stopped and a fresh one started for the next upload
 *    (the API has no way to stop a running job).
 * The forecast rows are matched to series by key and date (panels-data.ts locatorOf), never by position.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, startService, stopService, type BenchService } from '../service.js';
import { freshDatabase } from '../support.js';
import type { CandidateScore } from '../../src/training/index.js';
import type { ChildResult } from './panels-child.js';
import type { Upload } from './panels-data.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
export const OUT = join(root, 'bench', '.out');
export const SERVICE = process.env.BENCH_PANELS_SERVICE === '1';
export const TIME_LIMIT_S = Number(process.env.BENCH_PANELS_TIME_LIMIT ?? 300);

export interface OursRun {
  status: 'ok' | 'timeout' | 'failed';
  error?: string;
  /** In-process: trainModel alone; service: the upload answered -> status 3. */
  wallMs: number;
  /** The forecast rows (column -> cell) as the engine or GET /data output=1 gave them. */
  rows: Record<string, string>[];
  /** The engine's own split (result.timing.phases), when it reports one. */
  phases?: Record<string, number>;
  /** result.selection.panel (src/training/core/types.ts PanelReport), when the engine reports one. */
  panel?: { keys?: string[]; series?: number; shortest?: number; longest?: number; wins?: Record<string, number> };
  outputs?: { column: string; chosen: string }[];
  /** In-process only: the first output's candidates and notes as the engine reported them. */
  candidates?: CandidateScore[];
  engineNotes?: string[];
  /** Service only: the upload's request (read and stored) and the output's (written back). */
  uploadMs?: number;
  outputMs?: number;
  /** 1-minute load average when the run ended: the machine is shared. */
  load: number;
}

const load = () => Math.round(loadavg()[0]! * 100) / 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function inProcess(name: string, upload: Upload, limitS: number): Promise<OursRun> {
  mkdirSync(OUT, { recursive: true });
  const inFile = join(OUT, `panels-upload-${name}.json`);
  const outFile = join(OUT, `panels-result-${name}.json`);
  writeFileSync(inFile, JSON.stringify(upload));
  rmSync(outFile, { force: true });
  const started = performance.now();
  const outcome = await new Promise<{ code: number | null; timedOut: boolean; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--max-old-space-size=8192', '--import', 'tsx', join(here, 'panels-child.ts'), inFile, outFile], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
    let timedOut = false;
    // The child's start-up (tsx and the engine's imports, about 2 s) is given on top of the limit.
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, (limitS + 5) * 1000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, timedOut, stderr });
    });
  });
  if (outcome.timedOut) return { status: 'timeout', wallMs: performance.now() - started, rows: [], load: load() };
  if (outcome.code !== 0) {
    // The engine's message: the first line of the thrown error, where the child's stderr has one.
    const message = /Error: (.*)/.exec(outcome.stderr)?.[1] ?? outcome.stderr.trim().split('\n').slice(-3).join(' ');
    return { status: 'failed', error: message, wallMs: performance.now() - started, rows: [], load: load() };
  }
  const r = JSON.parse(readFileSync(outFile, 'utf8')) as ChildResult;
  rmSync(inFile, { force: true });
  rmSync(outFile, { force: true });
  if (r.wallMs > limitS * 1000) return { status: 'timeout', wallMs: r.wallMs, rows: [], load: load() };
  return {
    status: 'ok',
    wallMs: r.wallMs,
    rows: r.rows,
    ...(r.phases ? { phases: r.phases } : {}),
    ...(r.panel ? { panel: r.panel } : {}),
    ...(r.outputs ? { outputs: r.outputs } : {}),
    ...(r.candidates ? { candidates: r.candidates } : {}),
    ...(r.notes ? { engineNotes: r.notes } : {}),
    load: load(),
  };
}

const csvOf = (u: Upload) => {
  const cell = (v: string) => (/[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  return `${[u.header, ...u.rows].map((r) => r.map(cell).join(',')).join('\n')}\n`;
};

/** A service for a whole run, restarted after a job that ran past the limit. */
export class PanelService {
  private service: BenchService | null = null;
  private db: { url: string; drop(): Promise<void> } | null = null;

  async run(name: string, upload: Upload, limitS: number): Promise<OursRun> {
    this.db ??= await freshDatabase('bench_panels');
    this.service ??= await startService(this.db.url, { workers: 1, tz: 'UTC' });
    const service = this.service;
    const created = await call<{ job_id: number | string }>(service, 'POST', '/jobs.php', { app_name: 'panels', newTraining: 1 });
    const jobId = Number(created.job_id);
    const form = new FormData();
    form.append('session', service.session);
    form.append('tz', 'UTC');
    form.append('job_id', String(jobId));
    form.append('file', '1');
    form.append('Servicefile', new Blob([csvOf(upload)], { type: 'text/csv' }), `${name}.csv`);
    const posted = performance.now();
    await call(service, 'POST', '/data.php', {}, form);
    const started = performance.now();
    const uploadMs = started - posted;
    for (;;) {
      const status = Number((await call<{ Status: string }[]>(service, 'GET', '/jobs.php', { job_id: jobId }))[0]!.Status);
      if (status === 3) break;
      if (status === 4 || status === 5) {
        const progress = await call<{ Stat?: { Explanation?: string } }>(service, 'GET', '/jobs_progress.php', { job_id: jobId, progress: 2 }).catch(() => ({ Stat: undefined }));
        return { status: 'failed', error: `status ${status} ${progress.Stat?.Explanation ?? ''}`.trim(), wallMs: performance.now() - started, rows: [], uploadMs, load: load() };
      }
      if (performance.now() - started > limitS * 1000) {
        await this.restart();
        return { status: 'timeout', wallMs: performance.now() - started, rows: [], uploadMs, load: load() };
      }
      await sleep(200);
    }
    const wallMs = performance.now() - started;
    const asked = performance.now();
    const rows = await call<Record<string, string>[]>(service, 'GET', '/data.php', { job_id: jobId, output: 1, progress: 0 });
    const outputMs = performance.now() - asked;
    const progress = await call<{ Stat?: { Selection?: { panel?: OursRun['panel']; outputs?: { column: string; chosen: string; description: string }[] } | null } }>(
      service,
      'GET',
      '/jobs_progress.php',
      { job_id: jobId, progress: 2 },
    );
    const selection = progress.Stat?.Selection ?? null;
    return {
      status: 'ok',
      wallMs,
      rows,
      ...(selection?.panel ? { panel: selection.panel } : {}),
      outputs: (selection?.outputs ?? []).map((o) => ({ column: o.column, chosen: o.description || o.chosen })),
      uploadMs,
      outputMs,
      load: load(),
    };
  }

  private async restart() {
    if (this.service) await stopService(this.service);
    this.service = null;
  }

  async close() {
    await this.restart();
    await this.db?.drop();
    this.db = null;
  }
}

/** Ours on one upload, in-process or through `service` (BENCH_PANELS_SERVICE=1). */
export async function runOurs(name: string, upload: Upload, service: PanelService | null, limitS = TIME_LIMIT_S): Promise<OursRun> {
  try {
    return service ? await service.run(name, upload, limitS) : await inProcess(name, upload, limitS);
  } catch (e) {
    return { status: 'failed', error: (e as Error).message, wallMs: 0, rows: [], load: load() };
  }
}

/** `read 1.2 s, backtest 3.4 s, fit 0.5 s` from the engine's phases (any *Ms field), or ''. */
export function describePhases(run: OursRun): string {
  const parts = Object.entries(run.phases ?? {}).map(([k, ms]) => `${k.replace(/Ms$/, '')} ${(ms / 1000).toFixed(1)} s`);
  if (run.uploadMs !== undefined) parts.unshift(`upload ${(run.uploadMs / 1000).toFixed(1)} s`);
  if (run.outputMs !== undefined) parts.push(`output ${(run.outputMs / 1000).toFixed(1)} s`);
  return parts.join(', ');
}
