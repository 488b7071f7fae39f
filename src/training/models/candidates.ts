/**
 * The registry of model families, in order of simplicity (ties in the backtest go to the earlier one).
 * Stored models name their families; revive looks them up here.
 */
import { forestClassifierFamily, forestFamily } from './forest.js';
import { linearArFamily, linearDiffFamily, linearFamily } from './linear.js';
import type { ModelFamily, OutputKind } from './model.js';
import { majorityFamily, naiveFamilies } from './naive.js';

const numeric: ModelFamily[] = [...naiveFamilies, linearFamily, linearArFamily, linearDiffFamily, forestFamily];
const categorical: ModelFamily[] = [majorityFamily, forestClassifierFamily];

export function familiesFor(kind: OutputKind): ModelFamily[] {
  return kind === 'numeric' ? numeric : categorical;
}

export function familyNamed(kind: OutputKind, name: string): ModelFamily {
  const family = familiesFor(kind).find((f) => f.name === name);
  if (!family) throw new Error(`unknown model family '${name}'`);
  return family;
}
