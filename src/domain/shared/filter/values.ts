import { DateTime } from 'luxon';
import { show, type Fail } from './diagnostics.js';
import type { ColumnDef, FilterValue } from './types.js';

/** A literal as written: its token kind decides which coercions are legal. */
export interface Literal {
  kind: 'string' | 'number' | 'bool';
  /** Unescaped string, number text, or 'TRUE'/'FALSE'. */
  value: string;
  text: string;
  pos: number;
}

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** Turns a literal into the value bound for a column of the given type, or fails naming the literal. */
export function coerce(lit: Literal, wireName: string, def: ColumnDef, tz: string, fail: Fail): FilterValue {
  const wrong = (expected: string): never =>
    fail(`column '${wireName}' expects ${expected}, got ${show(lit.text)}`, lit.pos);
  // Numeric strings ('2') are accepted because legacy front ends quote everything.
  const numericText = lit.kind === 'number' ? lit.value : lit.kind === 'string' ? lit.value.trim() : undefined;

  switch (def.type) {
    case 'int': {
      if (numericText === undefined || !INTEGER.test(numericText)) return wrong('an integer');
      const n = Number(numericText);
      if (!Number.isSafeInteger(n)) return wrong('an integer within range');
      return n;
    }
    case 'number': {
      if (numericText === undefined || !DECIMAL.test(numericText)) return wrong('a number');
      const n = Number(numericText);
      if (!Number.isFinite(n)) return wrong('a number within range');
      return n;
    }
    case 'text':
    case 'json':
      return lit.kind === 'bool' ? lit.value.toLowerCase() : lit.value;
    case 'bool': {
      const v = lit.value.trim().toLowerCase();
      if (v === '1' || v === 'true') return true;
      if (v === '0' || v === 'false') return false;
      return wrong('a boolean (0, 1, true or false)');
    }
    case 'timestamp': {
      const format = DATE_TIME.test(lit.value) ? 'yyyy-MM-dd HH:mm:ss' : DATE_ONLY.test(lit.value) ? 'yyyy-MM-dd' : null;
      if (lit.kind !== 'string' || format === null) {
        return wrong("a date as 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'");
      }
      const parsed = DateTime.fromFormat(lit.value, format, { zone: tz });
      if (!parsed.isValid) return wrong('a valid calendar date and time');
      return parsed.toJSDate();
    }
    default: {
      const unknownType: never = def.type;
      return fail(`column '${wireName}' has unsupported type ${String(unknownType)}`, lit.pos);
    }
  }
}
