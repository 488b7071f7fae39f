import { show, type Fail } from './diagnostics.js';

export type TokenKind =
  | 'ident' // bare identifier (not a keyword)
  | 'quoted' // "ident" or `ident`
  | 'keyword'
  | 'string'
  | 'number'
  | 'op'
  | 'lparen'
  | 'rparen'
  | 'comma'
  | 'star'
  | 'eof';

export interface Token {
  kind: TokenKind;
  /** Identifier name, unescaped string, upper-cased keyword, number text or normalised operator. */
  value: string;
  /** The exact source slice, for messages. */
  text: string;
  /** 0-based offset of the first character. */
  pos: number;
}

const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'LIKE', 'ILIKE', 'IN', 'IS', 'NULL', 'BETWEEN', 'TRUE', 'FALSE']);

const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isIdentStart = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isIdentChar = (c: string): boolean => isIdentStart(c) || isDigit(c);
// Only ASCII whitespace: exotic spaces are a classic way to smuggle tokens past naive filters.
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v';

/** Splits the whole input into tokens, or fails at the first character that is not part of the language. */
export function tokenize(input: string, fail: Fail): Token[] {
  const tokens: Token[] = [];
  const at = (i: number): string => input.charAt(i);
  let i = 0;

  while (i < input.length) {
    const c = at(i);
    const start = i;
    const push = (kind: TokenKind, value: string, end: number): void => {
      tokens.push({ kind, value, text: input.slice(start, end), pos: start });
      i = end;
    };

    if (isSpace(c)) {
      i++;
    } else if (isIdentStart(c)) {
      let end = i + 1;
      while (isIdentChar(at(end))) end++;
      const word = input.slice(i, end);
      const upper = word.toUpperCase();
      if (KEYWORDS.has(upper)) push('keyword', upper, end);
      else push('ident', word, end);
    } else if (isDigit(c) || (c === '-' && isDigit(at(i + 1)))) {
      let end = i + 1;
      while (isDigit(at(end))) end++;
      if (at(end) === '.' && isDigit(at(end + 1))) {
        end += 2;
        while (isDigit(at(end))) end++;
      }
      // Rejects 0x41, 1e9, 1.2.3, 1abc: only plain decimals are literals.
      if (isIdentChar(at(end)) || at(end) === '.') {
        let bad = end;
        while (isIdentChar(at(bad)) || at(bad) === '.') bad++;
        fail(`invalid number ${show(input.slice(start, bad))}`, start);
      }
      push('number', input.slice(start, end), end);
    } else if (c === "'" || c === '"' || c === '`') {
      // Standard SQL quoting: the quote is escaped by doubling it; backslash has no special meaning.
      let value = '';
      let end = i + 1;
      for (;;) {
        if (end >= input.length) {
          const what = c === "'" ? 'string' : 'quoted identifier';
          fail(`unterminated ${what} ${show(input.slice(start))}`, start);
        }
        const ch = at(end);
        if (ch === c) {
          if (at(end + 1) === c) {
            value += c;
            end += 2;
            continue;
          }
          end++;
          break;
        }
        if (ch === '\0') fail('null byte (\\u0000) is not allowed', end);
        value += ch;
        end++;
      }
      if (c === "'") {
        push('string', value, end);
      } else {
        if (value.trim() === '') fail(`empty quoted identifier ${show(input.slice(start, end))}`, start);
        push('quoted', value, end);
      }
    } else if (c === '(') {
      push('lparen', c, i + 1);
    } else if (c === ')') {
      push('rparen', c, i + 1);
    } else if (c === ',') {
      push('comma', c, i + 1);
    } else if (c === '*') {
      push('star', c, i + 1);
    } else if (c === '=') {
      push('op', '=', i + 1);
    } else if (c === '<') {
      const n = at(i + 1);
      if (n === '=') push('op', '<=', i + 2);
      else if (n === '>') push('op', '<>', i + 2);
      else push('op', '<', i + 1);
    } else if (c === '>') {
      if (at(i + 1) === '=') push('op', '>=', i + 2);
      else push('op', '>', i + 1);
    } else if (c === '!' && at(i + 1) === '=') {
      push('op', '<>', i + 2);
    } else if ((c === '-' && at(i + 1) === '-') || c === '#' || (c === '/' && at(i + 1) === '*')) {
      fail(`comments are not allowed (found ${show(c === '#' ? c : input.slice(i, i + 2))})`, i);
    } else if (c === ';') {
      fail(`statement separator ';' is not allowed`, i);
    } else if (c === '\0') {
      fail('null byte (\\u0000) is not allowed', i);
    } else {
      const ch = String.fromCodePoint(input.codePointAt(i) ?? 0);
      const code = (ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
      fail(`unexpected character ${show(ch)} (U+${code})`, i);
    }
  }
  tokens.push({ kind: 'eof', value: '', text: '', pos: input.length });
  return tokens;
}
