/**
 * The one filter language for `fields`, `where` and `filters`: a hand-written tokenizer and
 * recursive-descent parser over a per-resource column whitelist, compiled to parameterised Kysely SQL.
 * Request text never becomes SQL text; only whitelisted column refs, fixed operators and bound values do.
 */
export type {
  ColumnType,
  ColumnDef,
  ColumnWhitelist,
  FilterOptions,
  FilterNode,
  FilterValue,
  CompareOp,
} from './types.js';
export { FILTER_LIMITS } from './types.js';
export { parseFilter, parseFields } from './parser.js';
export { compileFilter, filterExpression } from './compile.js';
