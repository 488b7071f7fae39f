import type { TrainingProgress } from './types.js';

export interface EngineHooks {
  onProgress?: (progress: TrainingProgress) => void;
  /** Minimum ms between progress reports (the first (0) and the final (100) are always sent). Default 200. */
  progressIntervalMs?: number;
}

/**
 * Progress in work units (epochs for the legacy network, cost-weighted fits for the engine): `advance` only
 * rises, reaches 100 only with done(), and reports are throttled to one per progressIntervalMs.
 */
export class ProgressReporter {
  private last = -Infinity;
  private readonly interval: number;

  constructor(
    private readonly total: number,
    private readonly hooks: EngineHooks,
  ) {
    this.interval = hooks.progressIntervalMs ?? 200;
    this.emit(0, 1, 0);
  }

  epoch(epoch: number, error: number): void {
    const now = performance.now();
    if (now - this.last < this.interval) return;
    this.emit(epoch, error, Math.min(99, Math.floor((100 * epoch) / this.total)));
  }

  done(error: number): void {
    this.emit(this.total, error, 100);
  }

  private emit(epoch: number, error: number, advance: number): void {
    if (!this.hooks.onProgress) return;
    this.last = performance.now();
    this.hooks.onProgress({ epoch, epochs: this.total, error, advance });
  }
}
