import { createRequire } from 'node:module';
import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { isBoldWeight, textWidth } from './text-metrics.js';

/**
 * Server-side rendering: Vega-Lite compiled to Vega, drawn headless to SVG by Vega's own renderer,
 * rasterised by resvg (a Rust binary shipped inside its npm package). Text in the PNG uses DejaVu Sans
 * from the dejavu-fonts-ttf package, so it renders on machines without system fonts.
 */

const require = createRequire(import.meta.url);
const FONT_FILES = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'].map((file) => require.resolve(`dejavu-fonts-ttf/ttf/${file}`));

/** Vega-Lite's warnings (e.g. a dropped encoding) are not the caller's business: compile quietly. */
const quiet = vega.logger(vega.None);

interface TextItem {
  fontSize?: number;
  fontWeight?: unknown;
  limit?: number;
}

/**
 * Vega lays text out by the widths of the font drawn (DejaVu Sans, text-metrics.ts), not by its guess of
 * 0.8 x font size a character: titles, axis labels and legends then take the room they really need. A
 * user-defined width is the hook Vega keeps for renderers without a canvas (its own textMetrics.width).
 */
(vega as unknown as { textMetrics: { width: (item: TextItem, text: unknown) => number } }).textMetrics.width = (item, text) => {
  const line = typeof text === 'string' ? text.trim() : typeof text === 'number' ? String(text) : '';
  const width = textWidth(line, item.fontSize ?? 11, isBoldWeight(item.fontWeight));
  // A limited text is cut to its limit with an ellipsis: it takes at most that much.
  return item.limit && item.limit > 0 ? Math.min(width, item.limit) : width;
};

/** Where a panel goes in the image: its top-left corner. */
export interface Placement {
  x: number;
  y: number;
}

async function panelSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec, { logger: quiet }).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * One SVG document of the panels: at their placements in an image of `size`, or without placements
 * stacked top to bottom, each `size.height` tall. Each panel is its own Vega view (autosize "fit" works
 * only on single views), nested as an <svg> at its offset.
 */
export async function renderSvg(panels: TopLevelSpec[], size: { width: number; height: number }, at?: Placement[]): Promise<string> {
  const drawn: string[] = [];
  for (const panel of panels) drawn.push(await panelSvg(panel));
  if (drawn.length === 1 && !at) return drawn[0]!;
  const places = at ?? drawn.map((_, i) => ({ x: 0, y: i * size.height }));
  const nested = drawn.map((svg, i) => svg.replace(/^<svg /, `<svg x="${places[i]!.x}" y="${places[i]!.y}" `));
  const [width, height] = at ? [size.width, size.height] : [size.width, size.height * drawn.length];
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<rect width="100%" height="100%" fill="white"/>${nested.join('')}</svg>`
  );
}

/** The SVG as PNG bytes at its own pixel size, on a white background. */
export function renderPng(svg: string): Buffer {
  const resvg = new Resvg(svg, {
    background: 'white',
    font: { fontFiles: FONT_FILES, loadSystemFonts: false, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}

/**
 * Drawing on the caller's thread, as before the worker pool: the benchmark's baseline. The server never
 * uses it (it would hold the event loop for the whole drawing).
 */
export const inThreadRenderer = {
  svg: (panels: TopLevelSpec[], size: { width: number; height: number }, at?: Placement[]) => renderSvg(panels, size, at),
  png: async (panels: TopLevelSpec[], size: { width: number; height: number }, at?: Placement[]) => renderPng(await renderSvg(panels, size, at)),
  close: async () => undefined,
};
