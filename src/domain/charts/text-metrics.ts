import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * Text widths in DejaVu Sans, the font every chart is rasterised with (render.ts). Without a canvas, Vega
 * guesses a text's width as 0.8 x font size per character, about 1.4 times the real width: a long
 * title then claims more than the image's width and autosize "fit" shrinks the plot to make room (a
 * half-hourly chart's plot took a third of the image). The advance widths are read from the font files
 * themselves (their cmap and hmtx tables), so wrapping and Vega's layout agree with what is drawn.
 */

const require = createRequire(import.meta.url);

interface FontMetrics {
  unitsPerEm: number;
  /** Advance width of each BMP code point's glyph, in font units; 0 where the font has none. */
  advance: Uint16Array;
  fallback: number;
}

function readFont(file: string): FontMetrics {
  const font = readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${file}`));
  const tables = new Map<string, number>();
  const count = font.readUInt16BE(4);
  for (let i = 0; i < count; i++) {
    const at = 12 + i * 16;
    tables.set(font.toString('latin1', at, at + 4), font.readUInt32BE(at + 8));
  }
  const table = (tag: string) => {
    const at = tables.get(tag);
    if (at === undefined) throw new Error(`${file} has no ${tag} table`);
    return at;
  };
  const unitsPerEm = font.readUInt16BE(table('head') + 18);
  const metrics = font.readUInt16BE(table('hhea') + 34);
  const hmtx = table('hmtx');
  const glyphAdvance = (glyph: number) => font.readUInt16BE(hmtx + 4 * Math.min(glyph, metrics - 1));

  // The Windows Unicode BMP subtable (platform 3, encoding 1), format 4: segments of code points.
  const cmap = table('cmap');
  let subtable = -1;
  for (let i = 0; i < font.readUInt16BE(cmap + 2); i++) {
    const at = cmap + 4 + i * 8;
    if (font.readUInt16BE(at) === 3 && font.readUInt16BE(at + 2) === 1) subtable = cmap + font.readUInt32BE(at + 4);
  }
  if (subtable < 0 || font.readUInt16BE(subtable) !== 4) throw new Error(`${file} has no format-4 Unicode cmap`);
  const segments = font.readUInt16BE(subtable + 6) / 2;
  const ends = subtable + 14;
  const starts = ends + 2 * segments + 2;
  const deltas = starts + 2 * segments;
  const offsets = deltas + 2 * segments;
  const advance = new Uint16Array(65536);
  for (let s = 0; s < segments; s++) {
    const end = font.readUInt16BE(ends + 2 * s);
    const start = font.readUInt16BE(starts + 2 * s);
    const delta = font.readUInt16BE(deltas + 2 * s);
    const rangeOffset = font.readUInt16BE(offsets + 2 * s);
    for (let code = start; code <= end && code < 0xffff; code++) {
      let glyph: number;
      if (rangeOffset === 0) glyph = (code + delta) & 0xffff;
      else {
        const at = offsets + 2 * s + rangeOffset + 2 * (code - start);
        glyph = font.readUInt16BE(at);
        if (glyph !== 0) glyph = (glyph + delta) & 0xffff;
      }
      if (glyph !== 0) advance[code] = glyphAdvance(glyph);
    }
  }
  return { unitsPerEm, advance, fallback: advance['M'.charCodeAt(0)]! };
}

let regular: FontMetrics | undefined;
let bold: FontMetrics | undefined;

/** Width in pixels of `text` set in DejaVu Sans (bold when asked) at `fontSize` pixels; kerning is ignored. */
export function textWidth(text: string, fontSize: number, isBold = false): number {
  const font = isBold ? (bold ??= readFont('DejaVuSans-Bold.ttf')) : (regular ??= readFont('DejaVuSans.ttf'));
  let units = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    units += (code < 0xffff ? font.advance[code] : 0) || font.fallback;
  }
  return (units / font.unitsPerEm) * fontSize;
}

/** Vega's text items: a weight of bold or 600 and above is set in the bold face. */
export function isBoldWeight(weight: unknown): boolean {
  return weight === 'bold' || weight === 'bolder' || (typeof weight === 'number' && weight >= 600) || (typeof weight === 'string' && Number(weight) >= 600);
}

/**
 * `text` broken at spaces into lines no wider than `width` pixels; a single word wider than that is cut
 * at a character so no line overflows. Never answers an empty list.
 */
export function wrapText(text: string, width: number, fontSize: number, isBold = false): string[] {
  const lines: string[] = [];
  let line = '';
  const fits = (candidate: string) => textWidth(candidate, fontSize, isBold) <= width;
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (fits(candidate)) {
      line = candidate;
      continue;
    }
    if (line !== '') lines.push(line);
    line = word;
    while (!fits(line) && line.length > 1) {
      let cut = line.length - 1;
      while (cut > 1 && !fits(line.slice(0, cut))) cut--;
      lines.push(line.slice(0, cut));
      line = line.slice(cut);
    }
  }
  lines.push(line);
  return lines;
}
