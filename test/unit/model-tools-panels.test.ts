/**
 * The chat's read_forecast on a job of many series: per series answers (each series' winner and
 * error against its best naive, narrowed by `series`), and the older shape kept for a job of one series.
 * The services are faked with a hand-made selection report and output rows, as the engine leaves them.
 */
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/domain/caller.js';
import { chartAddress } from '../../src/domain/charts/charts.service.js';
import { MODEL_TOOLS, runModelTool, type ModelToolScope, type ModelToolsDeps } from '../../src/domain/chat/model-tools.js';
import type { SelectionReport } from '../../src/training/core/types.js';

type Row = Record<string, string>;

const SERIES = [
  { key: ['Mining and Extraction'], chosen: 'theta', error: 0.61, naive: 0.9 },
  { key: ['Finance'], chosen: 'ets', error: 0.22, naive: 0.3 },
  { key: ['Construction'], chosen: 'seasonal-naive', error: 1.1, naive: 1.1 },
];

function panelSelection(): SelectionReport {
  return {
    modelFamily: 'auto',
    scheme: 'rolling-origin',
    windows: 3,
    horizon: 2,
    frequency: 'monthly',
    season: 12,
    outputs: [{ column: 'rate', kind: 'numeric', metric: 'MASE', chosen: 'ets', description: 'ets', error: 0.7, baseline: { name: 'seasonal-naive', error: 0.9 }, candidates: [] }],
    panel: {
      keys: ['series'],
      keySource: 'detected',
      series: 3,
      shortest: 40,
      longest: 46,
      wins: { ets: 1, theta: 1, 'seasonal-naive': 1 },
      perSeries: SERIES.map((s, i) => ({
        key: s.key,
        rows: 40 + 3 * i,
        outputs: [{ column: 'rate', chosen: s.chosen, error: s.error, baseline: { name: 'seasonal-naive', error: s.naive } }],
        ...(s.chosen === 'seasonal-naive' ? { note: 'too short for the other families' } : {}),
      })),
    },
  };
}

/** Two months to forecast per series, in upload order (the series as the selection lists them). */
const OUTPUT: Row[] = SERIES.flatMap((s, i) =>
  ['7', '8'].map((month) => ({ series: s.key[0]!, year: '2003', month, rate: String(5 + i), rate_lo80: String(4 + i), rate_hi80: String(6 + i), rate_lo95: String(3 + i), rate_hi95: String(7 + i) })),
);

function depsFor(selection: SelectionReport | null, output: Row[]): ModelToolsDeps {
  const job = { id: 41, app_name: 'forecast', status: 3, success_rate: 88.5, selection };
  return {
    jobs: { get: async () => job },
    data: {
      rows: async (_caller: Caller, q: { progress: 0 | 1; cap?: number }) => (q.progress ? [{ count: String(output.length) }] : output.slice(0, q.cap)),
    },
    chartUrl: (jobId: number, series?: string[][]) => chartAddress('http://front.example', jobId, series),
  } as unknown as ModelToolsDeps;
}

const scope: ModelToolScope = { caller: { userId: 1, role: 'consumer' } as Caller, mayUse: async () => true };
const read = async (deps: ModelToolsDeps, args: Record<string, unknown>) =>
  JSON.parse(await runModelTool(deps, scope, { id: 'c1', name: 'read_forecast', arguments: JSON.stringify(args) })) as Record<string, any>;

describe('read_forecast on a job of many series', () => {
  it('offers a series argument', () => {
    const tool = MODEL_TOOLS.find((t) => t.name === 'read_forecast')!;
    expect(Object.keys((tool.parameters as { properties: object }).properties)).toEqual(['job_id', 'series']);
    expect(tool.description).toContain('each series');
  });

  it('names each series’ winner and backtest error against its best naive, in upload order, and the report without its per-series list', async () => {
    const result = await read(depsFor(panelSelection(), OUTPUT), { job_id: 41 });
    expect(result.series).toEqual([
      { key: { series: 'Mining and Extraction' }, rows: 40, outputs: [{ column: 'rate', chosen: 'theta', metric: 'MAE', error: 0.61, best_naive: { name: 'seasonal-naive', error: 0.9 } }] },
      { key: { series: 'Finance' }, rows: 43, outputs: [{ column: 'rate', chosen: 'ets', metric: 'MAE', error: 0.22, best_naive: { name: 'seasonal-naive', error: 0.3 } }] },
      { key: { series: 'Construction' }, rows: 46, outputs: [{ column: 'rate', chosen: 'seasonal-naive', metric: 'MAE', error: 1.1, best_naive: { name: 'seasonal-naive', error: 1.1 } }], note: 'too short for the other families' },
    ]);
    expect(result.series_total).toBe(3);
    expect(result.selection.panel).toEqual({ keys: ['series'], keySource: 'detected', series: 3, shortest: 40, longest: 46, wins: { ets: 1, theta: 1, 'seasonal-naive': 1 } });
    expect(result.selection.outputs[0].chosen).toBe('ets');
    expect(result.rows).toEqual(OUTPUT);
    expect(result.total_rows).toBe(6);
    expect(result.chart_url).toBe('http://front.example/api/202203010900/charts.php?job_id=41&format=png');
  });

  it('series narrows the winners, the rows and the chart to the series named (case ignored)', async () => {
    const result = await read(depsFor(panelSelection(), OUTPUT), { job_id: 41, series: 'finance, MINING AND EXTRACTION' });
    expect(result.series.map((s: { key: { series: string } }) => s.key.series)).toEqual(['Finance', 'Mining and Extraction']);
    expect((await read(depsFor(panelSelection(), OUTPUT), { job_id: 41, series: '2..3' })).series.map((s: { key: { series: string } }) => s.key.series)).toEqual(['Finance', 'Construction']);
    expect(result.rows.map((r: Row) => `${r.series} ${r.month}`)).toEqual(['Mining and Extraction 7', 'Mining and Extraction 8', 'Finance 7', 'Finance 8']);
    expect(result.rows_of_series).toBe(4);
    expect(result.chart_url).toBe(`http://front.example/api/202203010900/charts.php?job_id=41&format=png&series=${encodeURIComponent('Finance,Mining and Extraction')}`);
  });

  it('an unknown series is an error naming the key and examples', async () => {
    expect(await read(depsFor(panelSelection(), OUTPUT), { job_id: 41, series: 'Fishing' })).toEqual({
      error: "'Fishing' is not a series of job 41: its 3 series are keyed by series, e.g. 'Mining and Extraction', 'Finance', 'Construction'",
    });
  });
});

describe('read_forecast on a job of one series keeps its shape', () => {
  it('rows, selection, success rate and chart address, no per-series fields; a series argument is refused', async () => {
    const selection = { ...panelSelection(), panel: undefined };
    const rows = OUTPUT.slice(0, 2).map(({ series: _series, ...row }) => row);
    const result = await read(depsFor(selection, rows), { job_id: 41 });
    expect(Object.keys(result)).toEqual(['job_id', 'success_rate', 'selection', 'total_rows', 'rows', 'chart_url']);
    expect(result).toMatchObject({ job_id: 41, success_rate: 88.5, total_rows: 2, rows, chart_url: 'http://front.example/api/202203010900/charts.php?job_id=41&format=png' });
    expect(await read(depsFor(selection, rows), { job_id: 41, series: 'Finance' })).toEqual({ error: 'Job 41 holds one series (its upload has no key columns): leave series out' });
  });
});
