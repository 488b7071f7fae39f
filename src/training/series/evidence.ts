/**
 * Weak evidence on yearly and quarterly series. There a backtest has three windows of 6 or 8 steps cut from a few
 * dozen values, and ranks a dozen families little better than chance; what the M3 and M4 competitions found on
 * such series is that the last value, the last value plus the average step and a damped trend are hard to beat,
 * and a complex winner that beats them narrowly on three windows loses to them as often as not on the next. So a
 * winner other than those simple references keeps its place only where its backtest is clearly better than the
 * better of the last value and drift: its window errors at most CLEAR_SHARE of that reference's, in geometric mean
 * over the windows. Otherwise the reference is answered, and the report says so. A damped trend that wins alone
 * stays (it is a simple reference itself, and on US infant mortality by race it halved the last value's error), but
 * is not a fallback, since no family fits it alone.
 *
 * Measured on 66 real yearly and quarterly series from npm packages at three origins each (bench/forecast/short.ts),
 * the rule chosen on the tune half and checked on the test half (docs/benchmarks.md, short).
 */
import type { Backtest } from '../selection/backtest.js';
import type { Frequency } from '../core/dates.js';
import { describesDampedTrend } from '../models/ets.js';
import type { FitRows, SeriesInfo } from '../models/model.js';
import { ONE_ROW, splitActuals, splitsError, type Scored, type Winner } from '../selection/selection.js';

const WEAK_EVIDENCE_FREQUENCIES = new Set<Frequency>(['annual', 'quarterly']);

/**
 * A winner's backtest counts as clear where its window errors are at most this share of the reference's (e^-0.5):
 * on the tune half, shares of e^-0.1, e^-0.2, e^-0.3, e^-0.7 and e^-1 and a t-test on the windows' log ratios
 * were measured beside it.
 */
export const CLEAR_SHARE = Math.exp(-0.5);

/** A winner that is one of the simple references alone: the last value, drift, or ETS's damped trend. */
function isSimpleReference(winner: Winner): boolean {
  if (winner.members.length !== 1) return false;
  const name = (winner.members[0] as Winner['members'][number]).family.name;
  return ONE_ROW.has(name) || (name === 'ets' && describesDampedTrend(winner.description));
}

/** The mean absolute error of each backtest window. */
function windowErrors(predictions: (number | string)[][], backtest: Backtest, actual: readonly number[]): number[] {
  return splitActuals(backtest, actual).map((values, s) => splitsError([values], [predictions[s] as (number | string)[]]));
}

/** The geometric mean over the windows of the winner's error over the reference's (1 where both are 0). */
function shareOf(winner: readonly number[], reference: readonly number[]): number {
  const logs = winner.map((e, w) => {
    const r = reference[w] as number;
    return e === 0 && r === 0 ? 0 : Math.log(Math.max(e, 1e-300) / Math.max(r, 1e-300));
  });
  return Math.exp(logs.reduce((a, b) => a + b, 0) / Math.max(1, logs.length));
}

/**
 * The winner of a numeric output on a yearly or quarterly time axis, or the better simple reference where the
 * winner's backtest is not clearly better than it; `note` says why the reference was taken.
 */
export function weighEvidence(winner: Winner, scored: readonly Scored[], backtest: Backtest, data: FitRows, info: SeriesInfo): { winner: Winner; note?: string } {
  if (!info.timeOrdered || !WEAK_EVIDENCE_FREQUENCIES.has(info.frequency)) return { winner };
  if (isSimpleReference(winner)) return { winner };
  const references = scored.filter((s) => ONE_ROW.has(s.family.name) && s.predictions !== null && s.error !== null && Number.isFinite(s.error));
  if (references.length === 0) return { winner };
  const reference = references.reduce((a, b) => ((b.error as number) < (a.error as number) ? b : a));
  const actual = data.target as number[];
  const share = shareOf(windowErrors(winner.predictions, backtest, actual), windowErrors(reference.predictions as (number | string)[][], backtest, actual));
  if (share <= CLEAR_SHARE) return { winner };
  const windows = backtest.splits.length;
  return {
    winner: { members: [{ family: reference.family, weight: 1 }], predictions: reference.predictions as (number | string)[][], error: reference.error as number, description: reference.description },
    note:
      `weak evidence on ${windows} window${windows === 1 ? '' : 's'} of ${backtest.horizon}: ${winner.description} scored ${share.toFixed(2)} of ` +
      `${reference.family.name}'s error (geometric mean over the windows), not the ${CLEAR_SHARE.toFixed(2)} or less that counts as clear: ${reference.family.name} answered`,
  };
}
