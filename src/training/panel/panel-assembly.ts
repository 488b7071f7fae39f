/**
 * A panel's one result (job-parts.ts's assembly unit): every series' outcome (panel-part.ts fitPanelPart) put back
 * in upload order, with the panel's stored model and its report across series.
 */
import { shownEffect } from '../models/drivers.js';
import { medianOf, NAIVE_NAMES } from '../models/naive.js';
import type { PanelPlan, RunSummary, SeriesOutcome } from './panel-part.js';
import type { PanelSeriesState, PanelState } from './panel-predict.js';
import { MIN_KNOWN_ROWS } from '../core/series.js';
import type { OutputSelection, PanelReport, PanelSeriesReport, TrainedModelV2, TrainingResult } from '../core/types.js';

/** Series listed one by one in the report; the counts cover all of them. */
const MAX_LISTED_SERIES = 1_000;

/** The job's one result from its plan and every series' outcome: rows in upload order, the panel's model and report. */
export function assemblePanel(
  plan: PanelPlan,
  outcomes: SeriesOutcome[],
  timing: { trainMs: number; phases?: { readMs: number; backtestMs: number; fitMs: number } },
): TrainingResult {
  const byIndex = new Array<SeriesOutcome | undefined>(plan.members.length);
  for (const o of [...plan.outcomes, ...outcomes]) byIndex[o.index] = o;
  // Rows in upload order; a series' generated future rows right after its last uploaded row.
  const placed: { order: number; row: TrainingResult['forecasts'][number] }[] = [];
  const seriesStates: PanelSeriesState[] = [];
  const perSeries: PanelSeriesReport[] = [];
  const wins: Record<string, number> = {};
  const inputColumns = new Set<string>(plan.keys);
  const outputs = new Set<string>();
  const fits: NonNullable<SeriesOutcome['fit']>[] = [];
  plan.members.forEach((m, index) => {
    const o = byIndex[index];
    if (!o) throw new Error(`series ${index} of the panel has no outcome`);
    const last = m.rows[m.rows.length - 1] as number;
    o.forecasts.forEach((f, j) => {
      const rowIndex = f.rowIndex === null ? null : (m.rows[f.rowIndex] as number);
      placed.push({ order: rowIndex ?? last + (j + 1) / (o.forecasts.length + 1), row: { ...f, rowIndex } });
    });
    if (o.engine && o.fit) {
      fits.push(o.fit);
      seriesStates.push({ key: m.key, engine: o.engine });
      o.engine.inputColumns.forEach((c) => inputColumns.add(c));
      o.engine.outputs.forEach((out) => outputs.add(out.column));
      for (const out of o.fit.selection.outputs) wins[out.chosen] = (wins[out.chosen] ?? 0) + 1;
      const timeNotes = o.fit.selection.timeNotes ?? [];
      perSeries.push({ key: m.key, rows: o.knownRows, outputs: o.fit.selection.outputs, ...(timeNotes.length > 0 ? { note: timeNotes.join('; ') } : {}) });
    } else {
      seriesStates.push({ key: m.key, engine: null, carried: o.carried ?? {} });
      (o.outputs ?? []).forEach((c) => outputs.add(c));
      perSeries.push({ key: m.key, rows: o.knownRows, outputs: [], ...(o.note ? { note: o.note } : {}) });
    }
  });
  placed.sort((a, b) => a.order - b.order);

  const lengths = plan.members.map((_, i) => (byIndex[i] as SeriesOutcome).knownRows);
  const panel: PanelReport = {
    keys: plan.keys,
    keySource: plan.keySource,
    series: plan.members.length,
    shortest: lengths.reduce((a, b) => Math.min(a, b), Infinity),
    longest: lengths.reduce((a, b) => Math.max(a, b), 0),
    wins,
    perSeries: perSeries.slice(0, MAX_LISTED_SERIES),
  };
  const state: PanelState = { version: 1, kind: 'panel', keys: plan.keys, inputColumns: [...inputColumns], outputs: [...outputs], series: seriesStates };
  const params = { ...plan.params, seed: plan.seed };
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const validationRows = fits.reduce((s, f) => s + f.metrics.validationRows, 0);
  const mapes = fits.map((f) => f.metrics.mape).filter((m): m is number => m !== null);
  const frequencies = new Map<string, number>();
  for (const f of fits) frequencies.set(f.selection.frequency, (frequencies.get(f.selection.frequency) ?? 0) + 1);
  const frequency = [...frequencies.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'none';
  const typical = fits.find((f) => f.selection.frequency === frequency) ?? fits[0];
  // Every series too short for a model: each carried forward, and the report says why per series.
  const noRuns = fits.length === 0 ? [`none of the ${plan.members.length} series has ${MIN_KNOWN_ROWS} known rows: each carries its last known value forward`] : [];
  const notes = [...plan.notes, ...noRuns];
  return {
    model: JSON.parse(JSON.stringify({ version: 2, params, engine: state })) as TrainedModelV2,
    forecasts: placed.map((p) => p.row),
    selection: {
      modelFamily: 'auto',
      scheme: typical?.selection.scheme ?? 'rolling-origin',
      windows: fits.reduce((m, f) => Math.max(m, f.selection.windows), 0),
      horizon: fits.reduce((m, f) => Math.max(m, f.selection.horizon), 0),
      frequency,
      season: typical?.selection.season ?? 1,
      periods: typical?.selection.periods ?? [],
      ...(notes.length > 0 ? { timeNotes: notes } : {}),
      outputs: summaryOutputs(fits.flatMap((f) => f.runs)),
      panel,
    },
    metrics: {
      mae: mean(fits.map((f) => f.metrics.mae)),
      rmse: mean(fits.map((f) => f.metrics.rmse)),
      mape: mapes.length > 0 ? mean(mapes) : null,
      baselineMae: mean(fits.map((f) => f.metrics.baselineMae)),
      baselineRmse: mean(fits.map((f) => f.metrics.baselineRmse)),
      validationRows,
      trainingRows: fits.reduce((s, f) => s + f.metrics.trainingRows, 0),
    },
    successRate: validationRows === 0 ? 0 : Math.round(fits.reduce((s, f) => s + f.successRate * f.metrics.validationRows, 0) / validationRows),
    figures: { ...(fits[0]?.figures ?? { neurons: 0, inputs: 0, layersRequested: 0, layersCreated: 0 }), outputs: outputs.size },
    timing: { trainMs: timing.trainMs, samples: fits.reduce((s, f) => s + f.metrics.trainingRows, 0), epochs: 0, samplesEpochsPerSecond: 0, ...(timing.phases ? { phases: timing.phases } : {}) },
  };
}

/** Drivers listed per family in a panel's summary at most; the rest are counted. */
const SUMMED_DRIVERS = 6;

/**
 * What the families fitted on each series alone found of the known drivers, summed up over the series whose answer
 * they are in: per family and driver, the median effect and its range ("trend_regression in the answer of 12
 * series: price median -0.41 per unit (-0.62 to -0.18)"), the per-family view a user reads before any one series'.
 */
function seriesEffects(entries: RunSummary[]): string[] {
  const byFamily = new Map<string, { series: number; drivers: Map<string, number[]> }>();
  for (const run of entries) {
    for (const member of run.drivers ?? []) {
      let family = byFamily.get(member.family);
      if (!family) byFamily.set(member.family, (family = { series: 0, drivers: new Map() }));
      family.series++;
      for (const e of member.effects) {
        const values = family.drivers.get(e.driver) ?? [];
        values.push(e.perUnit);
        family.drivers.set(e.driver, values);
      }
    }
  }
  return [...byFamily].map(([name, family]) => {
    const drivers = [...family.drivers].map(([driver, values]) => {
      const range = values.length > 1 ? ` (${shownEffect(Math.min(...values))} to ${shownEffect(Math.max(...values))})` : '';
      return `${driver} ${values.length > 1 ? 'median ' : ''}${shownEffect(medianOf(values))} per unit${range}`;
    });
    const listed = drivers.slice(0, SUMMED_DRIVERS).join(', ') + (drivers.length > SUMMED_DRIVERS ? ` and ${drivers.length - SUMMED_DRIVERS} more drivers` : '');
    return `${name} in the answer of ${family.series} series: ${listed}`;
  });
}

/**
 * Per output column, the panel's table: each candidate's mean scaled error (MASE: backtest MAE over the series'
 * one-step naive MAE) over the series it scored on, the winners' mean, and the best naive family's. Categorical
 * outputs: mean error rates.
 */
function summaryOutputs(runs: RunSummary[]): OutputSelection[] {
  const columns = new Map<string, { kind: 'numeric' | 'categorical'; entries: RunSummary[] }>();
  for (const run of runs) {
    let entry = columns.get(run.column);
    if (!entry) columns.set(run.column, (entry = { kind: run.kind, entries: [] }));
    entry.entries.push(run);
  }
  return [...columns.entries()].map(([column, { kind, entries }]) => {
    const byFamily = new Map<string, { sum: number; count: number; notes: Set<string>; fitted?: string }>();
    let winners = 0;
    const chosen = new Map<string, number>();
    for (const run of entries) {
      winners += run.winnerError / run.scale;
      chosen.set(run.winner, (chosen.get(run.winner) ?? 0) + 1);
      for (const s of run.scored) {
        let f = byFamily.get(s.name);
        if (!f) byFamily.set(s.name, (f = { sum: 0, count: 0, notes: new Set() }));
        if (s.description && f.fitted === undefined) f.fitted = s.description;
        if (s.error !== null) {
          f.sum += s.error / run.scale;
          f.count++;
        } else if (s.note) f.notes.add(s.note);
      }
    }
    const candidates = [...byFamily.entries()].map(([name, f]) => ({
      name,
      description: f.count > 0 ? `${name} on ${f.count} of ${entries.length} series${f.fitted ? `: ${f.fitted}` : ''}` : name,
      error: f.count > 0 ? f.sum / f.count : null,
      ...(f.count < entries.length && f.notes.size > 0 ? { note: [...f.notes][0] } : {}),
    }));
    const naive = candidates.filter((c) => NAIVE_NAMES.has(c.name) && c.error !== null).sort((a, b) => (a.error as number) - (b.error as number))[0];
    const ranking = [...chosen.entries()].sort((a, b) => b[1] - a[1]);
    const error = winners / entries.length;
    const across = [...new Set(entries.flatMap((run) => (run.across ? [run.across] : [])))];
    // What a model across the series fitted once for all of them (the fixed effects' common slopes), where the answer uses it.
    const answered = (name: string) => chosen.has(name) || across.some((a) => new RegExp(`\\b${name}\\b`).test(a));
    const fittedNotes = [...byFamily.entries()].filter(([name, f]) => f.fitted !== undefined && answered(name)).map(([name, f]) => `${name}: ${f.fitted as string}`);
    const seriesNotes = seriesEffects(entries);
    return {
      column,
      kind,
      metric: kind === 'numeric' ? ('MASE' as const) : ('error rate' as const),
      chosen: (ranking[0] as [string, number])[0],
      description: [...across, `per series over ${entries.length} series: ${ranking.map(([name, count]) => `${name} ${count}`).join(', ')}`].join('; '),
      error,
      baseline: { name: naive?.name ?? 'none', error: naive?.error ?? error },
      candidates,
      ...(fittedNotes.length + seriesNotes.length > 0 ? { notes: [...fittedNotes, ...seriesNotes] } : {}),
    };
  });
}
