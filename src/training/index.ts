/**
 * Public surface of the training engine: the one module the service side imports (the layer test and
 * docs/architecture.md say why: the engine's inside can move without the service noticing).
 */
export * from './core/types.js';
export { detectDateFormat, parseDate, wholeDateFormat, withDateCache, type PartValues } from './core/dates.js';
export { trainModel, type EngineHooks } from './run/engine.js';
export { predict, predictWithIntervals, adjustForecast } from './run/predict.js';
export { modelColumns } from './run/model-columns.js';
export { createTrainingPool, type TrainingPool, type TrainingPoolOptions } from './run/pool.js';
export type { JobUnit } from './run/train.worker.js';
export type { TrainingLimits, TrainingSetReport, TrainingSpool } from './run/training-set.js';
