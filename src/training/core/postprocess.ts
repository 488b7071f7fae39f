import type { TrainingParams } from './types.js';

/**
 * Forecast post-processing for a numeric output, in this order:
 *  1. margins: v = pred + |pred| * (increaseMargin - decreaseMargin) / 100
 *  2. noNegatives: v = max(0, v)
 *  3. rounding to the output's decimals (max decimals seen in that column in the training rows).
 */
export function adjustForecast(pred: number, params: TrainingParams): number {
  const margin = (params.increaseMargin ?? 0) - (params.decreaseMargin ?? 0);
  let value = pred + (Math.abs(pred) * margin) / 100;
  if (params.noNegatives && value < 0) value = 0;
  return value;
}
