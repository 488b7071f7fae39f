/**
 * The one interface every forecasting model family implements. The engine (engine.ts) turns an
 * upload into FitRows per output column, asks each applicable family to fit on the rows before each backtest
 * window, scores the window, selects, then refits the winners on every known row and stores their `state`.
 *
 * Families never see CSV cells, dates or HTTP: only numbers the engine prepared. They must be deterministic
 * for a given `ctx.seed` (no Math.random), synchronous, and JSON-safe in their `state`.
 */
import type { Frequency } from '../core/dates.js';

export type OutputKind = 'numeric' | 'categorical';

/** What the engine learnt about the data before any model sees it. */
export interface SeriesInfo {
  /** Rows lie on a real, mostly regular time axis: trend, lags and seasons make sense. False = tabular data. */
  timeOrdered: boolean;
  frequency: Frequency;
  /** Season length in time steps (monthly 12, daily 7, hourly 24); 1 = no season. The shortest of `periods`. */
  season: number;
  /**
   * Every seasonal period of the data in time steps, ascending (half-hourly [48, 336], hourly [24, 168],
   * daily [7, 365.25], weekly [52.18], monthly [12], quarterly [4]); only those the known rows hold at least
   * two full cycles of. Empty = no season. Periods may be fractional (365.25); families round as they need.
   */
  periods: number[];
  /** Steps to forecast; also the length of each backtest window. */
  horizon: number;
}

/**
 * Rows a model is fitted on, for ONE output column. When info.timeOrdered they are chronological and
 * `time` is the position on the time axis in steps (integer, strictly increasing, gaps allowed); otherwise
 * `time` is just the row's index and carries no meaning.
 */
export interface FitRows {
  time: number[];
  /**
   * Exogenous features per row, all the same width, already scaled by the engine (numeric inputs
   * standardised on the fit rows, categories one-hot, calendar terms as sin/cos or season dummies).
   * Never contains the target or its lags: a family that wants lags builds them from `target` and `time`.
   */
  features: number[][];
  /** Numbers for a numeric output; class labels for a categorical output. */
  target: number[] | string[];
}

/** Rows to predict: same feature layout as the fit rows. */
export interface PredictRows {
  time: number[];
  features: number[][];
}

/** Training parameters of the App record that a family may honour (all optional, resolved by the engine). */
export interface FamilyParams {
  /** Hidden layers requested (LayersRequested), network only. 0 = automatic. */
  layersRequested: number;
  /** LearningRate, network only. */
  learningRate: number;
  /** Epoch cap per network fit (App record / engine default). */
  epochs: number;
  /** DeviatedTarget (percent) early-stop goal of the legacy network, undefined = disabled. */
  deviatedTarget?: number;
  /** DeviationTarget (percent), the success tolerance. */
  deviationTarget: number;
}

export interface FitContext {
  info: SeriesInfo;
  /** Deterministic seed for this fit (derived from data + params + window); use prng.mulberry32(seed). */
  seed: number;
  params: FamilyParams;
  /** Feature names (same order as FitRows.features columns), for describe(). */
  featureNames: string[];
  /**
   * Units of the user's column one feature step is (same order): the standard deviation a numeric input was
   * divided by, 1 for one-hot and calendar terms. A family that reports a driver's effect per unit reads it.
   */
  featureScales?: number[];
  /**
   * True for the refit on every known row whose state is stored, false for backtest fits that only rank
   * the family; a family may spend more on the final fit (the network averages its seeds only there).
   */
  final?: boolean;
  /** Report the share (0..1) of this fit's work done; call at least every ~100 ms of work. */
  progress(done: number): void;
}

/** A fitted model. `state` is JSON-safe and enough for the family's revive() to predict identically. */
export interface FittedModel<State = unknown> {
  /**
   * Predictions for the rows, in order. Rows with time after the last fit row are forecast (recursively
   * over the model's own predictions for lag-based models, using each row's features); rows at or before
   * it get the model's one-step-ahead value for that time. Numeric families return numbers, categorical
   * families class labels.
   */
  predict(rows: PredictRows): number[] | string[];
  /** One line, e.g. "SARIMA(1,1,1)(0,1,1)12", "ridge on 14 features (trend, 11 month terms, 2 inputs)". */
  describe(): string;
  readonly state: State;
  /** A family that models known drivers: each driver it used and its fitted effect per unit of the user's column. */
  effects?(): DriverEffect[];
}

/** One known driver's fitted effect: per unit of the user's column (a one-hot category: the difference it makes). */
export interface DriverEffect {
  driver: string;
  perUnit: number;
}

/**
 * What a family is, as the engine reads it to plan, filter, rank and report candidates. Every trait is optional:
 * a family that declares none is an ordinary candidate of every series' own choice, tried in a panel of few series.
 */
export interface FamilyTraits {
  /**
   * A naive reference, and which: the baseline every forecast must clear (a report names the best one, a panel
   * tries them all). 'last' forecasts from the one last row (naive, drift): an exact tie goes to a candidate of
   * many rows, and on weak evidence they are the simple references answered. 'level' is a constant of the whole
   * history (mean, median, season_mean, majority): a panel's series combines it with no other. 'season' repeats
   * a season's last values (seasonal_naive, seasonal_naive_long, seasonal_drift).
   */
  readonly baseline?: 'last' | 'level' | 'season';
  /**
   * Which series try it: every series (absent); only one whose plan chooses across many series ('pooled':
   * auto.arima's differencing and the families on logarithms, worth their place only there); none ('panel': the
   * global model, fitted across a whole panel and scored there, registered so a stored model revives).
   */
  readonly tried?: 'pooled' | 'panel';
  /** It competes only in a choice across many series, never in one series' own (selection.ts POOLED_ONLY says why). */
  readonly acrossSeriesOnly?: boolean;
  /** It is fitted on logarithms: a series with a value at or below zero (aboveZero) never tries it. */
  readonly positiveOnly?: boolean;
  /**
   * What one fit costs a panel's series (panel.ts seriesPlan): a 'cheap' family it tries in a panel of any size, a
   * 'cheap_without_cycle' one likewise where the series has no cycle (a ridge fit on a few lags, as cheap as
   * `linear`), a 'never' one (seconds a fit) in no panel; one without, only in a panel of few series and rows.
   */
  readonly panelCost?: 'cheap' | 'cheap_without_cycle' | 'never';
  /**
   * It models the known drivers (the user's inputs filled in the rows to forecast): a series with none never
   * tries it, so an upload without covariates is forecast as if the family did not exist.
   */
  readonly readsDrivers?: boolean;
}

export interface ModelFamily<State = unknown> {
  /** Stable identifier stored with the model: 'naive', 'seasonal_naive', 'drift', 'seasonal_drift', 'mean', 'median', 'season_mean', 'linear', 'sarima', 'network', 'logistic', 'majority'. */
  readonly name: string;
  readonly kind: OutputKind;
  readonly traits?: FamilyTraits;
  /** Whether the family can be fitted on `rows` fit rows of this data (e.g. SARIMA needs a time axis and two seasons). */
  applies(info: SeriesInfo, rows: number): boolean;
  /**
   * Whether a series' known values (in time order) give ground for the family, where the plan asks
   * (SelectionOptions.onlyWhereAdmitted): a level family on a series that keeps to a level, a seasonal naive on
   * one whose changes show the season. Absent: every series does.
   */
  admits?(values: number[], info: SeriesInfo): boolean;
  /** Relative cost of one fit on `rows` rows (naive 1 ... network 100+; `final` as in FitContext), used to weight progress. */
  cost(info: SeriesInfo, rows: number, final?: boolean): number;
  fit(rows: FitRows, ctx: FitContext): FittedModel<State>;
  /** Rebuilds the fitted model from its stored state (after a restart); must predict identically. */
  revive(state: State): FittedModel<State>;
}

/** Whether a series may be fitted on its logarithms (FamilyTraits.positiveOnly): every value above zero. */
export const aboveZero = (values: readonly number[]) => values.length > 0 && values.every((v) => v > 0);

/**
 * A season longer than a day of hours (half-hourly 48 and up, daily data's year): what the MSTL and harmonic
 * families are for. On monthly, quarterly and short daily series they only added selection noise.
 */
export const hasLongSeason = (info: SeriesInfo) => info.periods.some((p) => p > 24);

/** The longest of the series' learnable periods (they are ascending), 1 without one; fractional as learnt (365.25). */
export const longestPeriod = (info: SeriesInfo) => info.periods.at(-1) ?? 1;
