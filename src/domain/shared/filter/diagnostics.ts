import { Errors } from '../../errors.js';

/** Throws an invalid_filter AppError; positions are 0-based character offsets into the parameter text. */
export type Fail = (why: string, position?: number) => never;

export function failer(parameter: string): Fail {
  return (why, position) => {
    throw Errors.invalidFilter(
      parameter,
      position === undefined ? why : `${why} at position ${position} (0-based)`,
    );
  };
}

const MAX_SHOWN = 40;

/**
 * Quotes user text for an error message: truncated, and with control/invisible characters escaped so a
 * message can never carry a null byte or a look-alike character unnoticed.
 */
export function show(text: string): string {
  const chars = Array.from(text);
  const cut = chars.length > MAX_SHOWN ? chars.slice(0, MAX_SHOWN) : chars;
  const escaped = cut
    .map((ch) => {
      const code = ch.codePointAt(0) ?? 0;
      const printable = (code >= 0x20 && code < 0x7f) || (code > 0xa0 && !/[\p{C}\p{Z}]/u.test(ch));
      return printable ? ch : `\\u{${code.toString(16).toUpperCase().padStart(4, '0')}}`;
    })
    .join('');
  return `'${escaped}${chars.length > MAX_SHOWN ? '…' : ''}'`;
}
