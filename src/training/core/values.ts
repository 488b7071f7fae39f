/** Cell parsing/formatting shared by the engine and predict(). All CSV cells arrive as strings. */

export function isEmptyCell(value: string | null | undefined): boolean {
  return value === null || value === undefined || value.trim() === '';
}

const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const DECIMAL_COMMA = /^[+-]?\d*,\d+$/;

/**
 * Strict number parsing: plain decimal/exponent notation, or a single decimal comma ("3,5" -> 3.5, the
 * legacy uploads come from Spanish locales). Thousands separators are NOT accepted ("1,234" is 1.234):
 * anything else is non-numeric and makes a known row invalid (see engine.ts).
 */
export function parseNumber(value: string | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  let text = value.trim();
  if (text === '') return null;
  if (DECIMAL_COMMA.test(text)) text = text.replace(',', '.');
  if (!PLAIN_NUMBER.test(text)) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

export const MAX_DECIMALS = 6;

/** Decimals written in the cell ("12.50" -> 2, "1e-3" -> 3), capped at MAX_DECIMALS. */
export function countDecimals(value: string): number {
  const text = value.trim().replace(',', '.');
  const match = /^[+-]?\d*(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return 0;
  const fraction = match[1]?.length ?? 0;
  const exponent = match[2] ? Number(match[2]) : 0;
  return Math.min(MAX_DECIMALS, Math.max(0, fraction - exponent));
}

/** Fixed decimals, never exponent notation for normal magnitudes, never "-0". */
export function formatNumber(value: number, decimals: number): string {
  const text = value.toFixed(Math.max(0, Math.min(MAX_DECIMALS, decimals)));
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text;
}
