import type { CandidateScore, OutputSelection, SelectionReport } from '../../training/index.js';

/** Errors with four significant digits: enough to compare candidates, short enough to read. */
const figure = (n: number) => String(Number(n.toPrecision(4)));
export const score = (metric: OutputSelection['metric'], n: number) => (metric === 'error rate' ? `${figure(n * 100)}%` : figure(n));

function candidate(metric: OutputSelection['metric'], c: CandidateScore): string {
  if (c.error === null) return `${c.name} n/a${c.note ? ` (${c.note})` : ''}`;
  return `${c.name} ${score(metric, c.error)}`;
}

/** How often the bands held on the backtest (each window against widths built without it). */
function coverage(o: OutputSelection): string {
  const c = o.intervalCoverage;
  if (!c) return '';
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  return `; intervals on the backtest: 80% band held ${pct(c.p80)}, 95% band held ${pct(c.p95)} of ${c.rows} rows`;
}

function output(o: OutputSelection): string {
  const chosen = o.description && o.description !== o.chosen ? `${o.chosen} (${o.description})` : o.chosen;
  return (
    `${o.column}: ${chosen}, backtest ${o.metric} ${score(o.metric, o.error)} vs best naive ${o.baseline.name} ${score(o.metric, o.baseline.error)}` +
    `${coverage(o)} [candidates: ${o.candidates.map((c) => candidate(o.metric, c)).join(', ')}]` +
    (o.notes ?? []).map((note) => `; ${note}`).join('')
  );
}

function scheme(s: SelectionReport): string {
  switch (s.scheme) {
    case 'rolling-origin':
      return `rolling-origin backtest, ${s.windows} window${s.windows === 1 ? '' : 's'} of ${s.horizon} row${s.horizon === 1 ? '' : 's'}`;
    case 'k-fold':
      return `${s.windows}-fold cross-validation (no time axis)`;
    default:
      return 'hold-out of the last known rows';
  }
}

/**
 * One line a person can read: which model won for each output, every candidate's backtest error next to
 * the best naive baseline's, how often its intervals held on the backtest, then how they were compared (scheme, horizon, frequency). Written into the
 * finished job's status record and shown by GET /jobs_progress progress=2.
 */
export function explainSelection(s: SelectionReport | null | undefined): string {
  if (!s) return 'model family network: the single neural network (no backtest selection)';
  const family = s.modelFamily === 'network' ? 'model family network (the legacy single neural network)' : 'model family auto (chosen by backtest)';
  return `${family}; ${s.outputs.map(output).join('; ')}; ${scheme(s)}, horizon ${s.horizon}, frequency ${s.frequency}${seasons(s)}${timeNotes(s)}`;
}

/** The season, and every period when there are several (half-hourly: "season 48; periods 48, 336"). */
function seasons(s: SelectionReport): string {
  const periods = (s.periods ?? []).map((p) => String(Number(p.toFixed(2))));
  if (periods.length > 1) return ` (season ${s.season}; periods ${periods.join(', ')})`;
  return s.season > 1 ? ` (season ${s.season})` : '';
}

function timeNotes(s: SelectionReport): string {
  return (s.timeNotes ?? []).map((note) => `; ${note}`).join('');
}
