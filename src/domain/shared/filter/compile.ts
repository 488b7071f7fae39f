import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { failer, show, type Fail } from './diagnostics.js';
import { parseFilter } from './parser.js';
import type { ColumnDef, ColumnWhitelist, CompareOp, FilterNode, FilterOptions, FilterValue } from './types.js';

// Operators are fixed fragments chosen from the AST's closed set, so no SQL text ever comes from input.
const OPS: Record<CompareOp, RawBuilder<unknown>> = {
  '=': sql`=`,
  '<>': sql`<>`,
  '<': sql`<`,
  '<=': sql`<=`,
  '>': sql`>`,
  '>=': sql`>=`,
};

/**
 * Compiles an AST to a parenthesised boolean expression. Columns become sql.ref of the whitelisted SQL
 * column; every value is a bound parameter. Hand-built ASTs are re-checked against the whitelist here.
 */
export function compileFilter(
  node: FilterNode,
  whitelist: ColumnWhitelist,
  options: FilterOptions,
): Expression<SqlBool> {
  const fail: Fail = failer(options.parameter);
  const inner = compileNode(node, whitelist, fail);
  // and/or/not already carry their own parentheses; a bare leaf gets them so callers can AND safely.
  return node.kind === 'and' || node.kind === 'or' || node.kind === 'not' ? inner : sql<SqlBool>`(${inner})`;
}

/** parseFilter + compileFilter; undefined when there is no condition. */
export function filterExpression(
  text: string | undefined,
  whitelist: ColumnWhitelist,
  options: FilterOptions,
): Expression<SqlBool> | undefined {
  const node = parseFilter(text, whitelist, options);
  return node === undefined ? undefined : compileFilter(node, whitelist, options);
}

function compileNode(node: FilterNode, whitelist: ColumnWhitelist, fail: Fail): RawBuilder<SqlBool> {
  const column = (name: string, position: number): { ref: RawBuilder<unknown>; def: ColumnDef } => {
    const def = Object.hasOwn(whitelist, name) ? whitelist[name] : undefined;
    if (!def) return fail(`unknown column ${show(name)}`, position);
    // A JSON column is matched as the text the listing shows for it.
    return { ref: def.type === 'json' ? sql`(${sql.ref(def.column)})::text` : sql.ref(def.column), def };
  };
  const scalar = (name: string, position: number): RawBuilder<unknown> => {
    const { ref, def } = column(name, position);
    if (def.type === 'json') return fail(`column ${show(name)} holds JSON; only LIKE, ILIKE and IS [NOT] NULL apply`, position);
    return ref;
  };
  const bind = (value: FilterValue, position: number): RawBuilder<unknown> => {
    const ok =
      typeof value === 'string' ||
      (typeof value === 'number' && Number.isFinite(value)) ||
      typeof value === 'boolean' ||
      (value instanceof Date && !Number.isNaN(value.getTime()));
    if (!ok) return fail('unsupported value', position);
    return sql`${value}`;
  };

  switch (node.kind) {
    case 'and':
    case 'or': {
      if (node.children.length === 0) return fail(`empty ${node.kind.toUpperCase()}`);
      const parts = node.children.map((child) => compileNode(child, whitelist, fail));
      return sql<SqlBool>`(${sql.join(parts, node.kind === 'and' ? sql` and ` : sql` or `)})`;
    }
    case 'not':
      return sql<SqlBool>`(not ${compileNode(node.child, whitelist, fail)})`;
    case 'compare': {
      const op = Object.hasOwn(OPS, node.op) ? OPS[node.op] : undefined;
      if (!op) return fail('unsupported operator', node.position);
      const ref = scalar(node.column, node.position);
      return sql<SqlBool>`${ref} ${op} ${bind(node.value, node.position)}`;
    }
    case 'in': {
      const ref = scalar(node.column, node.position);
      if (node.values.length === 0) return fail('empty IN list', node.position);
      const list = sql.join(node.values.map((v) => bind(v, node.position)));
      return node.negated ? sql<SqlBool>`${ref} not in (${list})` : sql<SqlBool>`${ref} in (${list})`;
    }
    case 'like': {
      const { ref, def } = column(node.column, node.position);
      if (def.type !== 'text' && def.type !== 'json') return fail(`LIKE is only allowed on text columns`, node.position);
      const op = node.caseInsensitive
        ? node.negated ? sql`not ilike` : sql`ilike`
        : node.negated ? sql`not like` : sql`like`;
      return sql<SqlBool>`${ref} ${op} ${bind(node.pattern, node.position)}`;
    }
    case 'isnull': {
      const { ref } = column(node.column, node.position);
      return node.negated ? sql<SqlBool>`${ref} is not null` : sql<SqlBool>`${ref} is null`;
    }
    case 'between': {
      const ref = scalar(node.column, node.position);
      const low = bind(node.low, node.position);
      const high = bind(node.high, node.position);
      return node.negated
        ? sql<SqlBool>`${ref} not between ${low} and ${high}`
        : sql<SqlBool>`${ref} between ${low} and ${high}`;
    }
    default: {
      const unknownNode: never = node;
      return fail(`unsupported filter node ${show(String((unknownNode as { kind?: unknown }).kind))}`);
    }
  }
}
