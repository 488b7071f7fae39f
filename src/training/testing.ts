/**
 * The engine's pieces that benchmarks measure on their own: not the product's surface (index.ts is), so the
 * service side never imports this file (test/unit/training-imports.test.ts), and bench/ imports nothing else
 * of src/training but index.ts.
 */
/** The legacy network's data and settings: bench/train runs brain.js alone against the service on the same data and rate. */
export { DEFAULT_LEARNING_RATE } from './legacy/legacy.js';
export { ACTIVATION, OUTPUT_HIGH, OUTPUT_LOW } from './core/encoder.js';
/** The engine's seeded random numbers: benchmarks generate their data and seed brain.js the way a job does. */
export { mulberry32, withSeededRandom } from './core/prng.js';
/** The network family fitted alone (bench/train), against brain.js alone and sklearn on the same rows. */
export { createNetworkFamily } from './models/network.js';
export { linearFamily } from './models/linear.js';
export type { SeriesInfo } from './models/model.js';
/** The families a choice draws from: the ablation trains with each left out in turn. */
export { familiesFor } from './models/candidates.js';
/** Conformal widths from backtest errors: the intervals bench checks them on simulated errors of known spread. */
export { intervalWidths } from './selection/intervals.js';
