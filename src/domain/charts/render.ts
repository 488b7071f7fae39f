import { createRequire } from 'node:module';
import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/**
 * Server-side rendering: Vega-Lite compiled to Vega, drawn headless to SVG by Vega's own renderer,
 * rasterised by resvg (a Rust binary shipped inside its npm package). Text in the PNG uses DejaVu Sans
 * from the dejavu-fonts-ttf package, so it renders on machines without system fonts.
 */

const require = createRequire(import.meta.url);
const FONT_FILES = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'].map((file) => require.resolve(`dejavu-fonts-ttf/ttf/${file}`));

/** Vega-Lite's warnings (e.g. a dropped encoding) are not the caller's business: compile quietly. */
const quiet = vega.logger(vega.None);

async function panelSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec, { logger: quiet }).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * One SVG document of the panels stacked top to bottom, each `height` tall. Each panel is its own
 * Vega view (autosize "fit" works only on single views), nested as an <svg> at its offset.
 */
export async function renderSvg(panels: TopLevelSpec[], size: { width: number; height: number }): Promise<string> {
  const drawn: string[] = [];
  for (const panel of panels) drawn.push(await panelSvg(panel));
  if (drawn.length === 1) return drawn[0]!;
  const nested = drawn.map((svg, i) => svg.replace(/^<svg /, `<svg x="0" y="${i * size.height}" `));
  const total = size.height * drawn.length;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" width="${size.width}" height="${total}" viewBox="0 0 ${size.width} ${total}">` +
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
  svg: (panels: TopLevelSpec[], size: { width: number; height: number }) => renderSvg(panels, size),
  png: async (panels: TopLevelSpec[], size: { width: number; height: number }) => renderPng(await renderSvg(panels, size)),
  close: async () => undefined,
};
