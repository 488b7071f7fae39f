/**
 * The guard on a forecast that cannot be right. The backtest ranks candidates on windows that end before the
 * last known row; the final fit on every known row is another fit, and what it forecasts no window has seen. An
 * autoregression whose final fit has a root inside the unit circle, or one member of a combination that diverges,
 * answers a path the history rules out: a quarterly price index in hyperinflation, last value 6.6M, got 43M, 71M,
 * -306M, 709M, 4.9G from a combination whose backtest beat the naive fourfold. So the final fit's own path is
 * judged against what the history allows, member by member and combined, and a candidate that fails is replaced
 * by the next choice among the rest, whatever its backtest said.
 */
import type { FittedModel, ModelFamily, PredictRows } from '../models/model.js';
import { combineRow, type Winner } from '../selection/selection.js';

/**
 * How far past the history's own pace a path may go: at k steps ahead, GROWTH_ALLOWANCE times the largest
 * one-step ratio the series ever made (on a series above zero), k times over; on a series that reaches zero or
 * below, the largest one-step difference. Any k-step change the history made is within one such allowance, and
 * an explosion leaves it within a few steps. Three: at twice, a series' mean or a network's step back from a last
 * value far from it was refused too (US unemployed in wholesale and retail trade, employment in leisure by
 * quarter), and those are choices the backtest may make, not forecasts that cannot be right; at three and four the
 * corpus of 67 series is untouched and every sign change and explosion of the short yearly and quarterly series is
 * still caught (docs/benchmarks.md, short). Ratios on a series above zero, since a price in hyperinflation or one
 * that crashes toward zero changes its scale by orders of magnitude: a difference of its early years allows
 * anything at its late scale.
 */
export const GROWTH_ALLOWANCE = 3;

const shown = (v: number) => (Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toPrecision(3) : String(Number(v.toPrecision(4))));

/**
 * Why a forecast path cannot be right for this history, or null where it can: a value that is not a number, a
 * change from the last known value past the growth allowance (an explosion), or, for the `answer` (not for one
 * member of a combination, which may dip where the combination does not), a value at or below zero on a series
 * that never was. `steps` are each row's steps ahead of the last known row. A path `driven` by known drivers (a family
 * that models them, FamilyTraits readsDrivers) is not held to the history's pace: a driver the user filled in the
 * rows to forecast may move past anything the history showed (a scenario of a doubled unemployment rate doubles the
 * unemployed), and the regression on it follows; a value that is no number or crosses zero is refused as ever.
 */
export function implausiblePath(history: readonly number[], path: readonly number[], steps: readonly number[], of: 'answer' | 'member' = 'answer', driven = false): string | null {
  const bad = path.findIndex((v) => !Number.isFinite(v));
  if (bad >= 0) return `gives no number at step ${steps[bad] ?? bad + 1}`;
  const last = history.at(-1);
  if (last === undefined) return null;
  const positive = history.every((v) => v > 0);
  if (positive && of === 'answer') {
    const below = path.findIndex((v) => v <= 0);
    if (below >= 0) return `falls to ${shown(path[below] as number)} at step ${steps[below] ?? below + 1} on a series that was always above zero`;
  }
  if (driven) return null;
  // The pace of a series above zero is its ratios, of any other its differences.
  // A member's value at or below zero on a series above zero is measured by how far below the last value it went, in
  // units of that value: -5 from 146 is near, -5e6 from 0.3 explodes.
  const change = positive ? (a: number, b: number) => Math.abs(Math.log(b > 0 ? b / a : (a - b) / a)) : (a: number, b: number) => Math.abs(b - a);
  let fastest = 0;
  for (let t = 1; t < history.length; t++) fastest = Math.max(fastest, change(history[t - 1] as number, history[t] as number));
  const slack = positive ? 1e-9 : 1e-9 * Math.max(1, Math.abs(last));
  for (let i = 0; i < path.length; i++) {
    const k = Math.max(1, steps[i] ?? i + 1);
    if (change(last, path[i] as number) > GROWTH_ALLOWANCE * k * fastest + slack) {
      return `reaches ${shown(path[i] as number)} at step ${k} from a last value of ${shown(last)}, past ${GROWTH_ALLOWANCE}x the fastest the series ever moved`;
    }
  }
  return null;
}

export interface FinalMember {
  family: ModelFamily;
  weight: number;
  fitted: FittedModel;
}

export interface GuardedFit {
  winner: Winner;
  members: FinalMember[];
  /** One sentence per candidate that was not answered, and why. */
  notes: string[];
}

/**
 * The winner's final fit, each member's path (for an explosion) and the answered path judged (`judge`: null where a path can be
 * right); a winner with a path that cannot be right is replaced by `choose` among the candidates less every
 * family found so (its members that fail, or all its members where only their combination fails), until one
 * passes. The naive forecast always passes (it repeats the last value), so the loop ends; `choose` answers null
 * where no candidate is left (a plan without the naive family), and the last one is answered as it is.
 */
export function guardedFinalFit(
  winner: Winner,
  choose: (excluded: ReadonlySet<string>) => Winner | null,
  fit: (family: ModelFamily) => FittedModel,
  judge: (path: number[], of: 'answer' | 'member', driven: boolean) => string | null,
  rows: PredictRows,
): GuardedFit {
  const excluded = new Set<string>();
  const notes: string[] = [];
  let current = winner;
  for (;;) {
    const members = current.members.map((m) => ({ ...m, fitted: fit(m.family) }));
    if (rows.time.length === 0) return { winner: current, members, notes };
    const paths = members.map((m) => m.fitted.predict(rows) as number[]);
    const driven = (m: FinalMember) => m.family.traits?.readsDrivers === true;
    const failing = members.map((m, k) => ({ name: m.family.name, why: judge(paths[k] as number[], members.length > 1 ? 'member' : 'answer', driven(m)) })).filter((f) => f.why !== null);
    const combined = rows.time.map((_, i) =>
      combineRow(
        paths.map((p) => p[i] as number),
        members.map((m) => m.weight),
        current.combine,
      ),
    );
    const combinedWhy = members.length > 1 && failing.length === 0 ? judge(combined, 'answer', members.some(driven)) : null;
    if (failing.length === 0 && combinedWhy === null) return { winner: current, members, notes };
    const reasons = failing.length > 0 ? failing.map((f) => `${f.name}'s final fit ${f.why as string}`) : [`the combined forecast ${combinedWhy as string}`];
    // Where only the combination fails, the members that would fail answered alone go; where none would, every
    // member but the last value, which always passes, so the next choice differs and the loop ends.
    const answeredAlone = members.filter((m, k) => judge(paths[k] as number[], 'answer', driven(m)) !== null).map((m) => m.family.name);
    const going = failing.length > 0 ? failing.map((f) => f.name) : answeredAlone.length > 0 ? answeredAlone : members.map((m) => m.family.name).filter((name) => name !== 'naive');
    going.forEach((name) => excluded.add(name));
    const next = choose(excluded);
    if (!next) {
      // Only where a plan leaves out the naive family (a study's plan of one family): nothing else to answer.
      notes.push(`${current.description}: ${reasons.join('; ')}; no other candidate, answered as it is`);
      return { winner: current, members, notes };
    }
    notes.push(`${current.description} not answered: ${reasons.join('; ')}; ${next.description} instead`);
    current = next;
  }
}
