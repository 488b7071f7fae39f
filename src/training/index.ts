/** Public surface of the training engine. */
export * from './types.js';
export { trainModel, type EngineHooks } from './engine.js';
export { predict, predictWithIntervals, adjustForecast } from './predict.js';
export { modelColumns } from './model-columns.js';
export { createTrainingPool, type TrainingPool, type TrainingPoolOptions } from './pool.js';
