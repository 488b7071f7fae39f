import { IANAZone } from 'luxon';
import { Errors } from '../../errors.js';
import { failer, show, type Fail } from './diagnostics.js';
import { tokenize, type Token } from './tokenizer.js';
import { coerce, type Literal } from './values.js';
import { resolveColumn } from './whitelist.js';
import {
  FILTER_LIMITS,
  type ColumnDef,
  type ColumnWhitelist,
  type CompareOp,
  type FilterNode,
  type FilterOptions,
  type FilterValue,
} from './types.js';

/** Words that only make sense in an attack or in a query we do not support; named explicitly in errors. */
const SQL_WORDS = new Set([
  'SELECT', 'UNION', 'FROM', 'WHERE', 'DROP', 'DELETE', 'INSERT', 'UPDATE', 'ALTER', 'CREATE', 'TRUNCATE',
  'EXEC', 'EXECUTE', 'INTO', 'HAVING', 'GROUP', 'ORDER', 'LIMIT', 'OFFSET', 'JOIN', 'CASE', 'WHEN', 'THEN',
  'ELSE', 'END', 'CAST', 'AS', 'ALL', 'ANY', 'SOME', 'EXISTS', 'XOR', 'DIV', 'MOD', 'ESCAPE', 'COLLATE',
  'REGEXP', 'RLIKE', 'SIMILAR', 'GRANT', 'COPY', 'DECLARE', 'WAITFOR', 'BINARY',
]);

const FLIPPED: Record<CompareOp, CompareOp> = { '=': '=', '<>': '<>', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

type Operand =
  | { kind: 'column'; key: string; def: ColumnDef; tok: Token }
  | { kind: 'literal'; lit: Literal; tok: Token };

function describe(tok: Token): string {
  return tok.kind === 'eof' ? 'end of input' : show(tok.text);
}

function checkLength(text: string, fail: Fail): void {
  if (text.length > FILTER_LIMITS.maxLength) {
    fail(`input is ${text.length} characters long; the limit is ${FILTER_LIMITS.maxLength}`);
  }
}

class Parser {
  private i = 0;
  private depth = 0;
  private conditions = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly whitelist: ColumnWhitelist,
    private readonly tz: string,
    private readonly fail: Fail,
  ) {}

  parse(): FilterNode {
    const node = this.parseOr();
    const t = this.peek();
    if (t.kind !== 'eof') {
      if (t.kind === 'rparen') this.fail(`unmatched ')'`, t.pos);
      this.fail(`expected AND, OR or end of input but found ${describe(t)}`, t.pos);
    }
    return node;
  }

  private peek(offset = 0): Token {
    // The eof token is always last, so clamping keeps peek total.
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.i++;
    return t;
  }

  private isKeyword(t: Token, ...words: string[]): boolean {
    return t.kind === 'keyword' && words.includes(t.value);
  }

  private enter(t: Token): void {
    if (++this.depth > FILTER_LIMITS.maxDepth) {
      this.fail(`nesting deeper than ${FILTER_LIMITS.maxDepth} levels of parentheses/NOT: ${describe(t)}`, t.pos);
    }
  }

  private parseOr(): FilterNode {
    const children = [this.parseAnd()];
    while (this.isKeyword(this.peek(), 'OR')) {
      this.next();
      children.push(this.parseAnd());
    }
    return children.length === 1 ? (children[0] as FilterNode) : { kind: 'or', children };
  }

  private parseAnd(): FilterNode {
    const children = [this.parseNot()];
    while (this.isKeyword(this.peek(), 'AND')) {
      this.next();
      children.push(this.parseNot());
    }
    return children.length === 1 ? (children[0] as FilterNode) : { kind: 'and', children };
  }

  private parseNot(): FilterNode {
    const t = this.peek();
    if (!this.isKeyword(t, 'NOT')) return this.parsePrimary();
    this.next();
    this.enter(t);
    const child = this.parseNot();
    this.depth--;
    return { kind: 'not', child };
  }

  private parsePrimary(): FilterNode {
    const open = this.peek();
    if (open.kind !== 'lparen') return this.parsePredicate();
    this.next();
    this.enter(open);
    const node = this.parseOr();
    const close = this.next();
    if (close.kind !== 'rparen') {
      this.fail(`expected ')' to close '(' at position ${open.pos} but found ${describe(close)}`, close.pos);
    }
    this.depth--;
    return node;
  }

  private parsePredicate(): FilterNode {
    const first = this.peek();
    if (++this.conditions > FILTER_LIMITS.maxConditions) {
      this.fail(`more than ${FILTER_LIMITS.maxConditions} conditions: ${describe(first)}`, first.pos);
    }
    const left = this.parseOperand('a column or value');
    const t = this.peek();

    if (t.kind === 'op') {
      this.next();
      const right = this.parseOperand(`a value after '${t.text}'`);
      const op = t.value as CompareOp;
      if (left.kind === 'column' && right.kind === 'literal') return this.compare(left, op, right.lit);
      if (left.kind === 'literal' && right.kind === 'column') return this.compare(right, FLIPPED[op], left.lit);
      if (left.kind === 'column') {
        this.fail(`comparing column ${show(left.tok.text)} with column ${show(right.tok.text)} is not allowed`, right.tok.pos);
      }
      this.fail(`a condition must compare a column with a value, found ${show(left.tok.text)} ${t.text} ${show(right.tok.text)}`, left.tok.pos);
    }

    if (t.kind !== 'keyword' || !['NOT', 'LIKE', 'ILIKE', 'IN', 'IS', 'BETWEEN'].includes(t.value)) {
      this.fail(`expected an operator after ${show(left.tok.text)} but found ${describe(t)}`, t.pos);
    }
    if (left.kind !== 'column') {
      this.fail(`${t.value} needs a column on its left, found ${show(left.tok.text)}`, left.tok.pos);
    }
    this.next();

    if (t.value === 'IS') {
      const negated = this.isKeyword(this.peek(), 'NOT');
      if (negated) this.next();
      const n = this.next();
      if (!this.isKeyword(n, 'NULL')) this.fail(`expected NULL after IS${negated ? ' NOT' : ''} but found ${describe(n)}`, n.pos);
      return { kind: 'isnull', column: left.key, negated, position: left.tok.pos };
    }

    let negated = false;
    let op = t;
    if (t.value === 'NOT') {
      negated = true;
      op = this.next();
      if (!this.isKeyword(op, 'LIKE', 'ILIKE', 'IN', 'BETWEEN')) {
        this.fail(`expected LIKE, IN or BETWEEN after NOT but found ${describe(op)}`, op.pos);
      }
    }

    if (op.value !== 'LIKE' && op.value !== 'ILIKE') this.refuseJson(left, op.value);
    switch (op.value) {
      case 'LIKE':
      case 'ILIKE': {
        if (left.def.type !== 'text' && left.def.type !== 'json') {
          this.fail(`${op.value} is only allowed on text columns; ${show(left.tok.text)} is ${left.def.type}`, op.pos);
        }
        const pattern = this.literal(`a pattern after ${op.value}`);
        return {
          kind: 'like',
          column: left.key,
          negated,
          caseInsensitive: op.value === 'ILIKE',
          pattern: String(this.value(left, pattern)),
          position: left.tok.pos,
        };
      }
      case 'IN':
        return { kind: 'in', column: left.key, negated, values: this.inList(left), position: left.tok.pos };
      default: {
        const low = this.value(left, this.literal('a lower bound after BETWEEN'));
        const and = this.next();
        if (!this.isKeyword(and, 'AND')) this.fail(`expected AND in BETWEEN but found ${describe(and)}`, and.pos);
        const high = this.value(left, this.literal('an upper bound after BETWEEN ... AND'));
        return { kind: 'between', column: left.key, negated, low, high, position: left.tok.pos };
      }
    }
  }

  private inList(column: Extract<Operand, { kind: 'column' }>): FilterValue[] {
    const open = this.next();
    if (open.kind !== 'lparen') this.fail(`expected '(' after IN but found ${describe(open)}`, open.pos);
    if (this.peek().kind === 'rparen') this.fail('empty IN list', this.peek().pos);
    const values: FilterValue[] = [];
    for (;;) {
      const item = this.peek();
      if (values.length >= FILTER_LIMITS.maxInItems) {
        this.fail(`IN list longer than ${FILTER_LIMITS.maxInItems} items: ${describe(item)}`, item.pos);
      }
      values.push(this.value(column, this.literal('a value in the IN list')));
      const sep = this.next();
      if (sep.kind === 'rparen') return values;
      if (sep.kind !== 'comma') this.fail(`expected ',' or ')' in IN list but found ${describe(sep)}`, sep.pos);
    }
  }

  /** A JSON document has no order or equality a client could rely on (key order, spacing): only its text is matched. */
  private refuseJson(column: Extract<Operand, { kind: 'column' }>, op: string): void {
    if (column.def.type === 'json') {
      this.fail(`${op} is not allowed on ${show(column.tok.text)}, which holds JSON; use LIKE, ILIKE or IS [NOT] NULL`, column.tok.pos);
    }
  }

  private compare(column: Extract<Operand, { kind: 'column' }>, op: CompareOp, lit: Literal): FilterNode {
    this.refuseJson(column, `'${op}'`);
    return { kind: 'compare', column: column.key, op, value: this.value(column, lit), position: column.tok.pos };
  }

  private value(column: Extract<Operand, { kind: 'column' }>, lit: Literal): FilterValue {
    return coerce(lit, column.key, column.def, this.tz, this.fail);
  }

  private literal(expected: string): Literal {
    const operand = this.parseOperand(expected);
    if (operand.kind === 'column') {
      this.fail(`expected ${expected} but found column ${show(operand.tok.text)}; comparing columns is not allowed`, operand.tok.pos);
    }
    return operand.lit;
  }

  private parseOperand(expected: string): Operand {
    const t = this.next();
    switch (t.kind) {
      case 'string':
      case 'number':
        return { kind: 'literal', lit: { kind: t.kind, value: t.value, text: t.text, pos: t.pos }, tok: t };
      case 'keyword':
        if (t.value === 'TRUE' || t.value === 'FALSE') {
          return { kind: 'literal', lit: { kind: 'bool', value: t.value, text: t.text, pos: t.pos }, tok: t };
        }
        if (t.value === 'NULL') this.fail(`${show(t.text)} is only allowed in IS NULL or IS NOT NULL`, t.pos);
        return this.fail(`expected ${expected} but found keyword ${show(t.text)}`, t.pos);
      case 'ident':
      case 'quoted': {
        if (this.peek().kind === 'lparen') this.fail(`function calls are not allowed: ${show(t.text + '(')}`, t.pos);
        const resolved = resolveColumn(this.whitelist, t.value);
        if (resolved.ok) return { kind: 'column', key: resolved.key, def: resolved.def, tok: t };
        if (resolved.candidates.length > 1) {
          this.fail(`ambiguous column ${show(t.text)} (matches ${resolved.candidates.join(', ')})`, t.pos);
        }
        if (t.kind === 'ident' && SQL_WORDS.has(t.value.toUpperCase())) {
          this.fail(`SQL keyword ${show(t.text)} is not allowed`, t.pos);
        }
        const hint = t.text.startsWith('"') ? " (use single quotes for strings)" : '';
        return this.fail(`unknown column ${show(t.value)}${hint}`, t.pos);
      }
      case 'lparen':
        return this.fail(`expected ${expected} but found '('; sub-queries and expressions are not allowed`, t.pos);
      case 'eof':
        return this.fail(`expected ${expected} but found end of input`, t.pos);
      default:
        return this.fail(`expected ${expected} but found ${describe(t)}`, t.pos);
    }
  }
}

function zoneOf(options: FilterOptions): string {
  const tz = options.tz ?? 'UTC';
  if (!IANAZone.isValidZone(tz)) throw Errors.invalidTimezone(tz);
  return tz;
}

/** Parses a `where`/`filters` condition into a typed AST; undefined when the text is empty or blank. */
export function parseFilter(
  text: string | undefined,
  whitelist: ColumnWhitelist,
  options: FilterOptions,
): FilterNode | undefined {
  if (text === undefined) return undefined;
  const fail: Fail = failer(options.parameter);
  checkLength(text, fail);
  const tokens = tokenize(text, fail);
  if (tokens.length === 1) return undefined;
  return new Parser(tokens, whitelist, zoneOf(options), fail).parse();
}

/**
 * Parses a `fields` list into whitelist keys (canonical spelling, deduplicated, in order).
 * Empty, blank or '*' means every column; empty items between commas are ignored.
 */
export function parseFields(text: string | undefined, whitelist: ColumnWhitelist, parameter = 'fields'): string[] {
  const all = Object.keys(whitelist);
  if (text === undefined || text.trim() === '') return all;
  const fail: Fail = failer(parameter);
  checkLength(text, fail);
  const picked = new Set<string>();
  let needComma = false;
  for (const t of tokenize(text, fail)) {
    if (t.kind === 'eof') break;
    if (t.kind === 'comma') {
      needComma = false;
      continue;
    }
    if (needComma) fail(`expected ',' between column names but found ${describe(t)}`, t.pos);
    needComma = true;
    if (t.kind === 'star') {
      all.forEach((key) => picked.add(key));
    } else if (t.kind === 'ident' || t.kind === 'quoted' || t.kind === 'keyword') {
      // A keyword is just a name here: the list has no grammar it could confuse.
      const name = t.kind === 'keyword' ? t.text : t.value;
      const resolved = resolveColumn(whitelist, name);
      if (!resolved.ok) {
        const why = resolved.candidates.length > 1 ? 'ambiguous column' : 'unknown column';
        fail(`${why} ${show(name)}`, t.pos);
      }
      picked.add(resolved.key);
    } else {
      fail(`expected a column name but found ${describe(t)}`, t.pos);
    }
  }
  if (picked.size === 0) fail('no column names given');
  return [...picked];
}
