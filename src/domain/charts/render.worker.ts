/**
 * Piscina worker entry for chart drawing (render-pool.ts): the Vega-Lite compile, Vega's headless SVG
 * and resvg's rasterising run here, off the API's event loop. The PNG's bytes are moved back, not copied.
 */
import { Piscina } from 'piscina';
import type { TopLevelSpec } from 'vega-lite';

export interface RenderTask {
  panels: TopLevelSpec[];
  /** Without `at`, each panel's size (stacked); with it, the whole image's. */
  size: { width: number; height: number };
  /** Each panel's top-left corner in the image (render.ts Placement). */
  at?: { x: number; y: number }[];
  format: 'svg' | 'png';
}

type Render = typeof import('./render.js');
let render: Promise<Render> | undefined;

/**
 * Loaded on the first task, not imported: from TypeScript sources (tsx, vitest) piscina loads this file
 * through tsx's require hook, which cannot load Vega (top-level await in vega-canvas), and on Node 20 the
 * worker's --import loader does not reach import(); tsx's tsImport does. Compiled, render.js is plain ESM.
 */
function loadRender(): Promise<Render> {
  render ??= import.meta.url.endsWith('.ts')
    ? import('tsx/esm/api').then(({ tsImport }) => tsImport('./render.ts', import.meta.url) as Promise<Render>)
    : import('./render.js');
  return render;
}

export default async function draw(task: RenderTask): Promise<string | Uint8Array> {
  const { renderPng, renderSvg } = await loadRender();
  const svg = await renderSvg(task.panels, task.size, task.at);
  if (task.format === 'svg') return svg;
  const png = renderPng(svg);
  // A view of exactly the PNG's bytes, so moving its buffer hands over nothing else.
  const bytes = new Uint8Array(png.byteLength);
  bytes.set(png);
  return Piscina.move(bytes) as unknown as Uint8Array;
}
