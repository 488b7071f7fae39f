/** `npm run bench [name...]`: runs the named benchmarks (default: all that exist). */
const all: Record<string, () => Promise<unknown>> = {
  sessions: async () => (await import('./sessions/run.js')).benchSessions(),
  train: async () => (await import('./train/run.js')).benchTrain(),
  load: async () => (await import('./load/run.js')).benchLoad(),
  replies: async () => (await import('./replies/run.js')).benchReplies(),
  forecast: async () => (await import('./forecast/run.js')).benchForecast(),
  corpus: async () => (await import('./forecast/corpus.js')).benchCorpus(),
  short: async () => (await import('./forecast/short.js')).benchShort(),
  subdaily: async () => (await import('./forecast/subdaily.js')).benchSubdaily(),
  'subdaily-time': async () => (await import('./forecast/subdaily-time.js')).benchSubdailyTime(),
  ablation: async () => (await import('./forecast/ablation.js')).benchAblation(),
  intervals: async () => (await import('./forecast/intervals.js')).benchIntervals(),
  tabular: async () => (await import('./forecast/tabular.js')).benchTabular(),
  contract: async () => (await import('./contract/run.js')).benchContract(),
  footprint: async () => (await import('./footprint/run.js')).benchFootprint(),
  'training-memory': async () => (await import('./footprint/training.js')).benchTrainingMemory(),
  charts: async () => (await import('./charts/run.js')).benchCharts(),
  panels: async () => (await import('./forecast/panels.js')).benchPanels(),
  'panel-speed': async () => (await import('./forecast/panel-speed.js')).benchPanelSpeed(),
  drivers: async () => (await import('./forecast/drivers.js')).benchDrivers(),
  parts: async () => (await import('./parts/run.js')).benchParts(),
};
const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(all);
for (const name of names) {
  const run = all[name];
  if (!run) {
    console.error(`unknown benchmark '${name}'; known: ${Object.keys(all).join(', ')}`);
    process.exit(2);
  }
  await run();
}
