/** Public types of the filter language. The AST only ever holds whitelisted wire names and typed values. */

/** `json`: a stored JSON document, matched only as its text (LIKE, ILIKE) or by IS [NOT] NULL. */
export type ColumnType = 'int' | 'number' | 'text' | 'timestamp' | 'bool' | 'json';

/** `column` is the real SQL column (may be qualified, e.g. 'j.status'); it never comes from the request. */
export interface ColumnDef {
  column: string;
  type: ColumnType;
}

/** Key: the wire name clients use, e.g. 'Status' or 'app_name'. */
export type ColumnWhitelist = Record<string, ColumnDef>;

export interface FilterOptions {
  /** Request parameter name, used in error messages ('where', 'filters', ...). */
  parameter: string;
  /** IANA zone in which timestamp literals are read; default 'UTC'. */
  tz?: string;
}

export type CompareOp = '=' | '<>' | '<' | '<=' | '>' | '>=';

/** Values are bound as query parameters, never spliced into SQL. */
export type FilterValue = string | number | boolean | Date;

/** `column` is always a whitelist key (canonical spelling); `position` is the 0-based offset in the source text. */
export type FilterNode =
  | { readonly kind: 'and'; readonly children: readonly FilterNode[] }
  | { readonly kind: 'or'; readonly children: readonly FilterNode[] }
  | { readonly kind: 'not'; readonly child: FilterNode }
  | {
      readonly kind: 'compare';
      readonly column: string;
      readonly op: CompareOp;
      readonly value: FilterValue;
      readonly position: number;
    }
  | {
      readonly kind: 'in';
      readonly column: string;
      readonly negated: boolean;
      readonly values: readonly FilterValue[];
      readonly position: number;
    }
  | {
      readonly kind: 'like';
      readonly column: string;
      readonly negated: boolean;
      readonly caseInsensitive: boolean;
      readonly pattern: string;
      readonly position: number;
    }
  | { readonly kind: 'isnull'; readonly column: string; readonly negated: boolean; readonly position: number }
  | {
      readonly kind: 'between';
      readonly column: string;
      readonly negated: boolean;
      readonly low: FilterValue;
      readonly high: FilterValue;
      readonly position: number;
    };

/** Bounds that keep parsing and the generated SQL small whatever a client sends. */
export const FILTER_LIMITS = {
  maxLength: 2000,
  maxConditions: 32,
  maxDepth: 8,
  maxInItems: 100,
} as const;
