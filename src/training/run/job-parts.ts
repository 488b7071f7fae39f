/**
 * A training job in units of work that any training thread of any process can run, as JSON text
 * the job queue stores between them:
 *  1. planTraining reads the upload once. A single series, a legacy network, or a panel that fits in one part
 *     is trained there and then (one unit, as before). A larger panel answers its plan: the shared part
 *     (keys, each series' rows in the upload, the series too short for a model), the global model's task,
 *     its parts and the task of its choice across series.
 *  2. Each round of the global model is a unit (runRoundUnit).
 *  3. Once every round is done, each part scores its series (runScoreUnit), since each series' selection weighs
 *     the global model's candidate.
 *  4. Once every part is scored, one unit reads every part's scores and chooses each output's structure across
 *     the panel's series (runChooseUnit).
 *  5. Then each part, the same groups of series, refits its series with its scores and that choice (runFitUnit).
 *  6. assembleUnit puts the refitted parts' outcomes together into the job's one result, in upload order.
 * A unit's answer depends only on its text and the earlier units' answers, never on where it ran: the output
 * is the same rows, in the same order, as a run of the whole job on one thread with the same seed.
 */
import { withDateCache } from '../core/dates.js';
import { trainOrPlan } from './engine.js';
import { seriesPlan } from '../panel/panel.js';
import { assemblePanel } from '../panel/panel-assembly.js';
import { choosePanel, fitPanelPart, globalResult, runGlobalTaskRound, scorePanelPart, type GlobalTask, type PanelRoundRun, type PanelChoice, type PanelPart, type PanelPlan, type SeriesOutcome, type SeriesScores } from '../panel/panel-part.js';
import { ProgressReporter, type EngineHooks } from '../core/progress.js';
import { WorkMeter } from '../series/series-run.js';
import type { SelectionOptions } from '../selection/selection.js';
import type { TrainingInput, TrainingResult } from '../core/types.js';

/** A job cut into units: the plan and global task stored once, the parts with their work units. */
export interface JobInParts {
  plan: string;
  /** The global model's task (its series and rounds), or null when the panel has none. */
  global: string | null;
  rounds: number;
  roundCost: number;
  parts: { task: string; cost: number }[];
  /** The choice across series' task (runChooseUnit): the panel's selection options. */
  choice: string;
}

export type PlannedTraining = { kind: 'result'; result: TrainingResult } | { kind: 'parts'; job: JobInParts };

/**
 * Trains the job here unless it is a panel of at least `minParts` parts; then answers it in parts. The
 * progress bar of a job in parts covers its planning only (engine.ts PLANNING_SHARE); the queue counts its parts.
 */
export function planTraining(input: TrainingInput, hooks: EngineHooks = {}, minParts = 2, partUnits?: number): PlannedTraining {
  const routed = trainOrPlan(input, hooks, minParts, partUnits);
  if (routed.kind === 'result') return routed;
  const { planned } = routed;
  return {
    kind: 'parts',
    job: {
      plan: JSON.stringify(planned.plan),
      global: planned.global ? JSON.stringify(planned.global.task) : null,
      rounds: planned.global?.task.rounds.length ?? 0,
      roundCost: planned.global?.roundCost ?? 0,
      parts: planned.parts.map((p) => ({ task: JSON.stringify(p.part), cost: p.cost })),
      choice: JSON.stringify(planned.seriesPlan.selection ?? {}),
    },
  };
}

/** Round `round` of the models across the panel's series; its answer is the JSON of a PanelRoundRun. */
export function runRoundUnit(global: string, round: number, hooks: EngineHooks = {}): string {
  const task = JSON.parse(global) as GlobalTask;
  const meter = new WorkMeter(1, hooks);
  const run = runGlobalTaskRound(task, round, meter.claim(1));
  meter.finish();
  return JSON.stringify(run);
}

/** A part's series scored with the global model's rounds (their answers, in round order); its answer is the JSON of its SeriesScores[]. */
export function runScoreUnit(partText: string, rounds: string[], hooks: EngineHooks = {}): string {
  return withDateCache(() => {
    const part = JSON.parse(partText) as PanelPart;
    const runs = rounds.map((r) => JSON.parse(r) as PanelRoundRun);
    const global = part.globalRounds > 0 && runs.length === part.globalRounds ? globalResult(part.globalSeason, runs, part.globalDrivers) : null;
    const scores = scorePanelPart(part, seriesPlan(part.panel.series, part.panel.rows), (cost) => new WorkMeter(cost, hooks), { global });
    return JSON.stringify(scores);
  });
}

/**
 * The choice across the panel's series from every part's scores (their answers, in part order); its answer is
 * the JSON of a PanelChoice. Each answer is read in turn, so only what the choice needs of every series is held.
 */
export function runChooseUnit(task: string, scores: string[]): string {
  const selection = JSON.parse(task) as SelectionOptions;
  function* series(): Generator<SeriesScores> {
    for (const text of scores) yield* JSON.parse(text) as SeriesScores[];
  }
  return JSON.stringify(choosePanel(series(), selection));
}

/** A part's series refitted with its scores (the answer of its score unit) and the panel's choice; its answer is the JSON of its SeriesOutcome[]. */
export function runFitUnit(partText: string, scoresText: string, choiceText: string, hooks: EngineHooks = {}): string {
  return withDateCache(() => {
    const part = JSON.parse(partText) as PanelPart;
    const scores = JSON.parse(scoresText) as SeriesScores[];
    const choice = JSON.parse(choiceText) as PanelChoice;
    const outcomes = fitPanelPart(part, scores, choice, seriesPlan(part.panel.series, part.panel.rows), (cost) => new WorkMeter(cost, hooks));
    return JSON.stringify(outcomes);
  });
}

/**
 * The job's one result from its plan and every refitted part's answer. Progress counts the answers read, then
 * the series put together (on 10,000 series 0.9 s and 1.1 s), so the job's bar moves while it runs.
 */
export function assembleUnit(planText: string, outcomes: string[], trainMs: number, hooks: EngineHooks = {}): TrainingResult {
  const steps = 2 * outcomes.length;
  const progress = new ProgressReporter(steps, hooks);
  const plan = JSON.parse(planText) as PanelPlan;
  const all: SeriesOutcome[] = [];
  outcomes.forEach((o, k) => {
    for (const outcome of JSON.parse(o) as SeriesOutcome[]) all.push(outcome);
    progress.epoch(k + 1, 0);
  });
  const result = assemblePanel(plan, all, { trainMs });
  // Not done (100): the job's bar reaches its end only when the job is Finished.
  progress.epoch(steps - 1, 0);
  return result;
}
