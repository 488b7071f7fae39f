import { describe, expect, it } from 'vitest';
import { explainSelection } from '../../src/domain/jobs/explanation.js';
import type { SelectionReport } from '../../src/training/core/types.js';

describe('explainSelection (status record text and GET /jobs_progress progress=2)', () => {
  it('names the winner per output, every candidate next to the best naive baseline, scheme, horizon and frequency', () => {
    const report: SelectionReport = {
      modelFamily: 'auto',
      scheme: 'rolling-origin',
      windows: 3,
      horizon: 12,
      frequency: 'monthly',
      season: 12,
      outputs: [
        {
          column: 'demand',
          kind: 'numeric',
          metric: 'MAE',
          chosen: 'linear',
          description: 'ridge on 14 features',
          error: 0.412345,
          baseline: { name: 'seasonal_drift', error: 3.14159 },
          candidates: [
            { name: 'naive', description: 'last value', error: 5.2 },
            { name: 'seasonal_drift', description: 'seasonal naive + drift', error: 3.14159 },
            { name: 'linear', description: 'ridge on 14 features', error: 0.412345 },
            { name: 'sarima', description: 'SARIMA', error: null, note: 'needs two seasons' },
          ],
        },
        {
          column: 'kind',
          kind: 'categorical',
          metric: 'error rate',
          chosen: 'majority',
          description: 'majority',
          error: 0.25,
          baseline: { name: 'majority', error: 0.25 },
          candidates: [{ name: 'majority', description: 'majority', error: 0.25 }],
        },
      ],
    };
    expect(explainSelection(report)).toBe(
      'model family auto (chosen by backtest); ' +
        'demand: linear (ridge on 14 features), backtest MAE 0.4123 vs best naive seasonal_drift 3.142 [candidates: naive 5.2, seasonal_drift 3.142, linear 0.4123, sarima n/a (needs two seasons)]; ' +
        'kind: majority, backtest error rate 25% vs best naive majority 25% [candidates: majority 25%]; ' +
        'rolling-origin backtest, 3 windows of 12 rows, horizon 12, frequency monthly (season 12)',
    );
    expect(explainSelection({ ...report, scheme: 'k-fold', windows: 5, season: 1, outputs: [] })).toContain('5-fold cross-validation (no time axis), horizon 12, frequency monthly');
    expect(explainSelection({ ...report, modelFamily: 'network', scheme: 'holdout' })).toMatch(/^model family network \(the legacy single neural network\);.*hold-out of the last known rows/);
    expect(explainSelection(undefined)).toBe('model family network: the single neural network (no backtest selection)');
  });
});
