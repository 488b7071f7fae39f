/**
 * The brain.js network as both of its users build and reload it: the legacy network-only procedure (legacy.ts)
 * and the network families (models/network.ts). It sits below both, so a family never imports the legacy
 * procedure or the stored-model predictor (which imports the family registry) to share a constant.
 */
import brain from 'brain.js';
import type { INeuralNetworkJSON } from 'brain.js';

export const MAX_HIDDEN_LAYERS = 5;
export const MIN_LAYER_WIDTH = 8;
export const MAX_LAYER_WIDTH = 64;
/** Epoch budget default: about SAMPLE_EPOCH_BUDGET row presentations per fit, within [20, 2000] epochs. */
export const SAMPLE_EPOCH_BUDGET = 600_000;
/** brain stops when training MSE (scaled units) <= errorThresh; tiny, so `epochs` is the real budget. */
export const ERROR_THRESH = 1e-9;
export const MOMENTUM = 0.1;

/** Width of every hidden layer: next power of two >= inputs + outputs, within [8, 64]. */
export function hiddenLayerWidth(inputs: number, outputs: number): number {
  return Math.max(MIN_LAYER_WIDTH, Math.min(MAX_LAYER_WIDTH, 2 ** Math.ceil(Math.log2(inputs + outputs))));
}

export type NetworkLike = { run(input: ArrayLike<number>): ArrayLike<number> };

export function loadNetwork(json: unknown): NetworkLike {
  const source = json as INeuralNetworkJSON;
  // brain's fromJSON adopts json.trainOpts by reference and fills in defaults (timeout: Infinity, which
  // JSON turns into null and fromJSON then rejects), so hand it a cleaned copy and keep the model pristine.
  const trainOpts = Object.fromEntries(
    Object.entries(source.trainOpts ?? {}).filter(([, v]) => v !== null && v !== undefined),
  );
  const net = new brain.NeuralNetwork();
  net.fromJSON({ ...source, sizes: [...source.sizes], trainOpts });
  return net;
}
