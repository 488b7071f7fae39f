import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type Expression,
  type SqlBool,
} from 'kysely';
import { AppError } from '../../src/domain/errors.js';
import {
  FILTER_LIMITS,
  compileFilter,
  filterExpression,
  parseFields,
  parseFilter,
  type ColumnWhitelist,
  type FilterNode,
  type FilterOptions,
} from '../../src/domain/shared/filter/index.js';
import { tokenize } from '../../src/domain/shared/filter/tokenizer.js';
import { failer } from '../../src/domain/shared/filter/diagnostics.js';

 
const db = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

const COLUMNS: ColumnWhitelist = {
  Id: { column: 'j.id', type: 'int' },
  Status: { column: 'j.status', type: 'int' },
  app_name: { column: 'j.app_name', type: 'text' },
  DateTime: { column: 'j.created_at', type: 'timestamp' },
  Score: { column: 'j.score', type: 'number' },
  Active: { column: 'j.active', type: 'bool' },
};

const WHERE: FilterOptions = { parameter: 'where' };
const PREFIX = 'select * from "jobs" as "j" where ';

function compileWith(expr: Expression<SqlBool>): CompiledQuery {
  return db.selectFrom('jobs as j').selectAll().where(expr).compile();
}

function compile(text: string, options: FilterOptions = WHERE): CompiledQuery {
  const expr = filterExpression(text, COLUMNS, options);
  if (!expr) throw new Error('expected an expression');
  return compileWith(expr);
}

function where(text: string, options: FilterOptions = WHERE): { sql: string; parameters: readonly unknown[] } {
  const c = compile(text, options);
  expect(c.sql.startsWith(PREFIX)).toBe(true);
  return { sql: c.sql.slice(PREFIX.length), parameters: c.parameters };
}

/** The error thrown by fn, asserting it is an invalid_filter AppError. */
function filterError(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    const appError = error as AppError;
    expect(appError.code).toBe('invalid_filter');
    return appError;
  }
  throw new Error('expected an invalid_filter error, nothing was thrown');
}

const ALLOWED_IDENTS = new Set(
  Object.values(COLUMNS).map((d) =>
    d.column
      .split('.')
      .map((p) => `"${p}"`)
      .join('.'),
  ),
);
const SAFE_TOKEN = /"[a-z_]+"\."[a-z_]+"|\$\d+|<>|<=|>=|[=<>(),]|\b(?:and|or|not|like|ilike|in|is|null|between)\b|\s+/g;

/** The WHERE clause may only contain whitelisted columns, operators, placeholders, parentheses and keywords. */
function expectSafeSql(c: CompiledQuery): void {
  expect(c.sql.startsWith(PREFIX)).toBe(true);
  const clause = c.sql.slice(PREFIX.length);
  const tokens = clause.match(SAFE_TOKEN) ?? [];
  expect(tokens.join('')).toBe(clause);
  for (const t of tokens) {
    if (t.startsWith('"')) expect(ALLOWED_IDENTS.has(t)).toBe(true);
  }
  const placeholders = tokens.filter((t) => t.startsWith('$'));
  expect(placeholders.length).toBe(c.parameters.length);
  expect(clause.startsWith('(') && clause.endsWith(')')).toBe(true);
}

describe('tokenizer', () => {
  const fail = failer('where');
  const kinds = (text: string): string[] => tokenize(text, fail).map((t) => `${t.kind}:${t.value}@${t.pos}`);

  it('splits identifiers, keywords, literals and operators with 0-based positions', () => {
    expect(kinds("Id>=-2.5 and `a b`<>'it''s'")).toEqual([
      'ident:Id@0',
      'op:>=@2',
      'number:-2.5@4',
      'keyword:AND@9',
      'quoted:a b@13',
      'op:<>@18',
      "string:it's@20",
      'eof:@27',
    ]);
  });

  it('normalises != to <> and recognises all comparison operators', () => {
    expect(tokenize('= <> != < <= > >=', fail).map((t) => t.value)).toEqual(['=', '<>', '<>', '<', '<=', '>', '>=', '']);
  });

  it('treats backslash as an ordinary character inside strings', () => {
    expect(tokenize("'a\\b'", fail)[0]).toMatchObject({ kind: 'string', value: 'a\\b' });
  });

  it.each([
    ['Id = 0x41', "invalid number '0x41' at position 5"],
    ['Id = 1e9', "invalid number '1e9' at position 5"],
    ['Id = 1.2.3', "invalid number '1.2.3' at position 5"],
    ["app_name = 'abc", "unterminated string ''abc' at position 11"],
    ['`Id = 1', 'unterminated quoted identifier'],
    ['"" = 1', 'empty quoted identifier'],
    ['Id = 1 -- x', "comments are not allowed (found '--') at position 7"],
    ['Id = 1 # x', "comments are not allowed (found '#') at position 7"],
    ['Id = 1 /* x */', "comments are not allowed (found '/*') at position 7"],
    ['Id = 1;', "statement separator ';' is not allowed at position 6"],
    ['Id = 1 | 2', "unexpected character '|' (U+007C) at position 7"],
    ['Id = \u20181\u2019', 'unexpected character \'\u2018\' (U+2018) at position 5'],
    ['Id\u00a0= 1', "unexpected character '\\u{00A0}' (U+00A0) at position 2"],
    ['Id = 1\u0000', 'null byte (\\u0000) is not allowed at position 6'],
    ["app_name = 'a\u0000'", 'null byte (\\u0000) is not allowed at position 13'],
  ])('rejects %j', (text, message) => {
    expect(filterError(() => tokenize(text, fail)).message).toContain(message);
  });

  it('says the position is 0-based', () => {
    expect(filterError(() => tokenize('Id;', fail)).message).toBe(
      "Invalid parameter 'where': statement separator ';' is not allowed at position 2 (0-based)",
    );
  });
});

describe('parseFilter', () => {
  it('returns undefined for missing, empty or blank input', () => {
    expect(parseFilter(undefined, COLUMNS, WHERE)).toBeUndefined();
    expect(parseFilter('', COLUMNS, WHERE)).toBeUndefined();
    expect(parseFilter(' \t\n ', COLUMNS, WHERE)).toBeUndefined();
    expect(filterExpression('  ', COLUMNS, WHERE)).toBeUndefined();
  });

  it('builds a typed AST with AND binding tighter than OR', () => {
    expect(parseFilter("Status = 1 OR Id > '5' AND NOT app_name LIKE 'x%'", COLUMNS, WHERE)).toEqual({
      kind: 'or',
      children: [
        { kind: 'compare', column: 'Status', op: '=', value: 1, position: 0 },
        {
          kind: 'and',
          children: [
            { kind: 'compare', column: 'Id', op: '>', value: 5, position: 14 },
            {
              kind: 'not',
              child: {
                kind: 'like',
                column: 'app_name',
                negated: false,
                caseInsensitive: false,
                pattern: 'x%',
                position: 31,
              },
            },
          ],
        },
      ],
    });
  });

  it('maps wire names to their canonical spelling, case-insensitively and through quotes', () => {
    const node = parseFilter('status = 1 AND `ID` = 2 AND "App_Name" = \'x\'', COLUMNS, WHERE);
    expect(node).toMatchObject({
      kind: 'and',
      children: [{ column: 'Status' }, { column: 'Id' }, { column: 'app_name' }],
    });
  });

  it('flips literal <op> column', () => {
    expect(parseFilter('5 < Id', COLUMNS, WHERE)).toMatchObject({ column: 'Id', op: '>', value: 5 });
    expect(parseFilter("'2' >= Status", COLUMNS, WHERE)).toMatchObject({ column: 'Status', op: '<=', value: 2 });
    expect(parseFilter('1 <> Id', COLUMNS, WHERE)).toMatchObject({ column: 'Id', op: '<>', value: 1 });
  });

  it('coerces values per column type', () => {
    const v = (text: string): unknown => (parseFilter(text, COLUMNS, WHERE) as { value: unknown }).value;
    expect(v("Id = '42'")).toBe(42);
    expect(v("Id = ' 7 '")).toBe(7);
    expect(v('Id = -3')).toBe(-3);
    expect(v('Score = 1.25')).toBe(1.25);
    expect(v("Score = '-0.5'")).toBe(-0.5);
    expect(v('app_name = 007')).toBe('007');
    expect(v('app_name = TRUE')).toBe('true');
    expect(v('Active = 1')).toBe(true);
    expect(v("Active = 'false'")).toBe(false);
    expect(v('Active = TRUE')).toBe(true);
    expect(v('Active = 0')).toBe(false);
  });

  it('reads timestamp literals in the given zone, with or without a time', () => {
    const at = (text: string, tz?: string): string =>
      ((parseFilter(text, COLUMNS, { parameter: 'where', tz }) as { value: Date }).value).toISOString();
    expect(at("DateTime >= '2024-01-01 00:00:00'")).toBe('2024-01-01T00:00:00.000Z');
    expect(at("DateTime >= '2024-01-01 00:00:00'", 'Europe/Madrid')).toBe('2023-12-31T23:00:00.000Z');
    expect(at("DateTime < '2024-07-01'", 'Europe/Madrid')).toBe('2024-06-30T22:00:00.000Z');
    expect(at("DateTime = '2024-03-10 12:30:15'", 'America/New_York')).toBe('2024-03-10T16:30:15.000Z');
  });

  it.each([
    ["Id = 'abc'", "column 'Id' expects an integer, got ''abc'' at position 5"],
    ['Id = 1.5', "column 'Id' expects an integer, got '1.5' at position 5"],
    ['Id = TRUE', "column 'Id' expects an integer, got 'TRUE'"],
    ['Id = 99999999999999999999', 'expects an integer within range'],
    ["Score = '1,5'", "column 'Score' expects a number, got ''1,5''"],
    ['Active = 2', "column 'Active' expects a boolean (0, 1, true or false), got '2'"],
    ["Active = 'yes'", 'expects a boolean'],
    ['DateTime > 2024', "column 'DateTime' expects a date"],
    ["DateTime > '2024/01/01'", "column 'DateTime' expects a date"],
    ["DateTime > '2024-02-30'", 'expects a valid calendar date and time'],
    ["DateTime > '2024-01-01 25:00:00'", 'expects a valid calendar date and time'],
    ["DateTime > '2024-01-01T00:00:00'", "column 'DateTime' expects a date"],
  ])('rejects ill-typed value %j', (text, message) => {
    expect(filterError(() => parseFilter(text, COLUMNS, WHERE)).message).toContain(message);
  });

  it('rejects an invalid time zone option', () => {
    expect(() => parseFilter('Id = 1', COLUMNS, { parameter: 'where', tz: 'Mars/Base' })).toThrow(
      expect.objectContaining({ code: 'invalid_timezone' }),
    );
  });

  it('names the offending token and its 0-based position', () => {
    expect(filterError(() => parseFilter("Id = 1 AND password_hash = 'x'", COLUMNS, WHERE)).message).toBe(
      "Invalid parameter 'where': unknown column 'password_hash' at position 11 (0-based)",
    );
    expect(filterError(() => parseFilter('Status = x', COLUMNS, { parameter: 'filters' })).message).toBe(
      "Invalid parameter 'filters': unknown column 'x' at position 9 (0-based)",
    );
  });

  it.each([
    ['Id =', 'expected a value after \'=\' but found end of input at position 4'],
    ['Id', "expected an operator after 'Id' but found end of input at position 2"],
    ['Id 1', "expected an operator after 'Id' but found '1' at position 3"],
    ['= 1', "expected a column or value but found '=' at position 0"],
    ['Id = 1 Status = 2', "expected AND, OR or end of input but found 'Status' at position 7"],
    ['Id = 1 AND', 'expected a column or value but found end of input at position 10'],
    ['(Id = 1', "expected ')' to close '(' at position 0 but found end of input at position 7"],
    ['Id = 1)', "unmatched ')' at position 6"],
    ['()', "expected a column or value but found ')' at position 1"],
    ['Id = NULL', "'NULL' is only allowed in IS NULL or IS NOT NULL at position 5"],
    ['Id IS 1', "expected NULL after IS but found '1' at position 6"],
    ['Id IS NOT TRUE', "expected NULL after IS NOT but found 'TRUE'"],
    ['Id NOT = 1', "expected LIKE, IN or BETWEEN after NOT but found '='"],
    ['Id LIKE 1', "LIKE is only allowed on text columns; 'Id' is int at position 3"],
    ["DateTime NOT ILIKE '2024%'", 'ILIKE is only allowed on text columns'],
    ["'x' LIKE app_name", "LIKE needs a column on its left, found ''x'' at position 0"],
    ['app_name LIKE app_name', "comparing columns is not allowed at position 14"],
    ['Id IN 1', "expected '(' after IN but found '1' at position 6"],
    ['Id IN ()', 'empty IN list at position 7'],
    ['Id IN (1 2)', "expected ',' or ')' in IN list but found '2' at position 9"],
    ['Id IN (1,)', "expected a value in the IN list but found ')' at position 9"],
    ['Id IN (Status)', "found column 'Status'; comparing columns is not allowed"],
    ['Id BETWEEN 1 OR 2', "expected AND in BETWEEN but found 'OR' at position 13"],
    ['Id BETWEEN 1 AND Status', 'comparing columns is not allowed'],
    ['1 BETWEEN Id AND 2', 'BETWEEN needs a column on its left'],
    ['Id = Status', "comparing column 'Id' with column 'Status' is not allowed at position 5"],
    ['1 = 1', "a condition must compare a column with a value, found '1' = '1' at position 0"],
    ['Id = AND', "expected a value after '=' but found keyword 'AND' at position 5"],
    ['Status = sleep(5)', "function calls are not allowed: 'sleep(' at position 9"],
    ['Id = (SELECT 1)', "sub-queries and expressions are not allowed at position 5"],
    ['Id = 1 UNION SELECT 1', "expected AND, OR or end of input but found 'UNION' at position 7"],
    ['SELECT = 1', "SQL keyword 'SELECT' is not allowed at position 0"],
    ['app_name = "x"', "unknown column 'x' (use single quotes for strings) at position 11"],
    ['Id = 1 *', "expected AND, OR or end of input but found '*'"],
  ])('rejects %j', (text, message) => {
    expect(filterError(() => parseFilter(text, COLUMNS, WHERE)).message).toContain(message);
  });

  it('reports ambiguous case-insensitive matches but prefers an exact match', () => {
    const cols: ColumnWhitelist = { id: { column: 'a.id', type: 'int' }, ID: { column: 'b.id', type: 'int' } };
    expect(parseFilter('id = 1', cols, WHERE)).toMatchObject({ column: 'id' });
    expect(parseFilter('ID = 1', cols, WHERE)).toMatchObject({ column: 'ID' });
    expect(filterError(() => parseFilter('Id = 1', cols, WHERE)).message).toContain("ambiguous column 'Id'");
  });

  it('never resolves inherited object properties as columns', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect(filterError(() => parseFilter(`${name} = 1`, COLUMNS, WHERE)).message).toContain(
        `unknown column '${name}'`,
      );
    }
  });

  describe('limits', () => {
    it(`accepts exactly ${FILTER_LIMITS.maxLength} characters and rejects one more`, () => {
      const ok = `app_name = '${'a'.repeat(FILTER_LIMITS.maxLength - 13)}'`;
      expect(ok.length).toBe(FILTER_LIMITS.maxLength);
      expect(parseFilter(ok, COLUMNS, WHERE)).toBeDefined();
      expect(filterError(() => parseFilter(`${ok} `, COLUMNS, WHERE)).message).toBe(
        "Invalid parameter 'where': input is 2001 characters long; the limit is 2000",
      );
    });

    it(`accepts ${FILTER_LIMITS.maxConditions} conditions and rejects more`, () => {
      const conds = (n: number): string => Array.from({ length: n }, (_, i) => `Id = ${i}`).join(' OR ');
      expect(parseFilter(conds(32), COLUMNS, WHERE)).toMatchObject({ kind: 'or' });
      const text = conds(33);
      expect(filterError(() => parseFilter(text, COLUMNS, WHERE)).message).toContain(
        `more than 32 conditions: 'Id' at position ${text.lastIndexOf('Id')}`,
      );
    });

    it(`accepts nesting depth ${FILTER_LIMITS.maxDepth} and rejects deeper`, () => {
      const parens = (n: number): string => `${'('.repeat(n)}Id = 1${')'.repeat(n)}`;
      const nots = (n: number): string => `${'NOT '.repeat(n)}Id = 1`;
      expect(parseFilter(parens(8), COLUMNS, WHERE)).toBeDefined();
      expect(parseFilter(nots(8), COLUMNS, WHERE)).toBeDefined();
      expect(parseFilter('NOT (NOT (NOT (NOT Id = 1)))', COLUMNS, WHERE)).toBeDefined();
      expect(filterError(() => parseFilter(parens(9), COLUMNS, WHERE)).message).toContain(
        "nesting deeper than 8 levels of parentheses/NOT: '(' at position 8",
      );
      expect(filterError(() => parseFilter(nots(9), COLUMNS, WHERE)).message).toContain(
        "nesting deeper than 8 levels of parentheses/NOT: 'NOT' at position 32",
      );
      expect(filterError(() => parseFilter('NOT (NOT (NOT (NOT (NOT Id = 1))))', COLUMNS, WHERE)).message).toContain(
        'nesting deeper than 8 levels',
      );
    });

    it(`accepts ${FILTER_LIMITS.maxInItems} IN items and rejects more`, () => {
      const list = (n: number): string => `Id IN (${Array.from({ length: n }, (_, i) => i).join(',')})`;
      expect(parseFilter(list(100), COLUMNS, WHERE)).toMatchObject({ kind: 'in' });
      const text = list(101);
      expect(filterError(() => parseFilter(text, COLUMNS, WHERE)).message).toContain(
        `IN list longer than 100 items: '100' at position ${text.lastIndexOf('100')}`,
      );
    });
  });
});

describe('compileFilter', () => {
  it('compiles the reference example to parameterised SQL', () => {
    const c = where(
      "Status = 2 AND (app_name LIKE 'fore%' OR Id IN (1,2,3)) AND DateTime >= '2024-01-01 00:00:00'",
      { parameter: 'where', tz: 'Europe/Madrid' },
    );
    expect(c.sql).toBe(
      '("j"."status" = $1 and ("j"."app_name" like $2 or "j"."id" in ($3, $4, $5)) and "j"."created_at" >= $6)',
    );
    expect(c.parameters).toEqual([2, 'fore%', 1, 2, 3, new Date('2023-12-31T23:00:00.000Z')]);
  });

  it('is case-insensitive for keywords', () => {
    const c = where("id in (1) aNd NOT app_name not ilike 'a%' Or status Is NoT nUlL");
    expect(c.sql).toBe('(("j"."id" in ($1) and (not "j"."app_name" not ilike $2)) or "j"."status" is not null)');
    expect(c.parameters).toEqual([1, 'a%']);
  });

  it.each([
    ['Id <> 1', '("j"."id" <> $1)', [1]],
    ['Id != 1', '("j"."id" <> $1)', [1]],
    ['Id < 1', '("j"."id" < $1)', [1]],
    ['Id <= 1', '("j"."id" <= $1)', [1]],
    ['Id > 1', '("j"."id" > $1)', [1]],
    ['Id >= 1', '("j"."id" >= $1)', [1]],
    ['3 > Id', '("j"."id" < $1)', [3]],
    ["app_name NOT LIKE '%x'", '("j"."app_name" not like $1)', ['%x']],
    ["app_name ILIKE 'A%'", '("j"."app_name" ilike $1)', ['A%']],
    ["app_name IN ('a', 'b')", '("j"."app_name" in ($1, $2))', ['a', 'b']],
    ['Id NOT IN (1, 2)', '("j"."id" not in ($1, $2))', [1, 2]],
    ['Id IS NULL', '("j"."id" is null)', []],
    ['Id IS NOT NULL', '("j"."id" is not null)', []],
    ['Id BETWEEN 1 AND 10', '("j"."id" between $1 and $2)', [1, 10]],
    ["Score NOT BETWEEN '0.5' AND 2", '("j"."score" not between $1 and $2)', [0.5, 2]],
    ['Active = true', '("j"."active" = $1)', [true]],
    ['NOT Id = 1', '(not "j"."id" = $1)', [1]],
    ['NOT (Id = 1 OR Id = 2)', '(not ("j"."id" = $1 or "j"."id" = $2))', [1, 2]],
    ['((Id = 1))', '("j"."id" = $1)', [1]],
    ['Id BETWEEN 1 AND 2 AND Status = 3', '("j"."id" between $1 and $2 and "j"."status" = $3)', [1, 2, 3]],
  ])('%s', (text, sqlText, parameters) => {
    const c = where(text);
    expect(c.sql).toBe(sqlText);
    expect(c.parameters).toEqual(parameters);
  });

  it('keeps the caller scope outside the parsed expression', () => {
    const expr = filterExpression('Id = 1 OR Status = 2', COLUMNS, WHERE);
    if (!expr) throw new Error('expected an expression');
    const c = db.selectFrom('jobs as j').selectAll().where('j.user_id', '=', 7).where(expr).compile();
    expect(c.sql).toBe(`${PREFIX}"j"."user_id" = $1 and ("j"."id" = $2 or "j"."status" = $3)`);
    expect(c.parameters).toEqual([7, 1, 2]);
  });

  it('re-checks hand-built ASTs against the whitelist', () => {
    const bad: FilterNode[] = [
      { kind: 'compare', column: 'password_hash', op: '=', value: 1, position: 0 },
      { kind: 'compare', column: 'constructor', op: '=', value: 1, position: 0 },
      { kind: 'compare', column: 'Id', op: '; drop' as '=', value: 1, position: 0 },
      { kind: 'compare', column: 'Id', op: '=', value: { toString: () => 'x' } as unknown as string, position: 0 },
      { kind: 'compare', column: 'Id', op: '=', value: Number.NaN, position: 0 },
      { kind: 'like', column: 'Id', negated: false, caseInsensitive: false, pattern: 'x', position: 0 },
      { kind: 'in', column: 'Id', negated: false, values: [], position: 0 },
      { kind: 'and', children: [] },
    ];
    for (const node of bad) filterError(() => compileFilter(node, COLUMNS, WHERE));
  });
});

/**
 * Classic injection attempts. Each must be refused with invalid_filter, or (where the grammar legitimately
 * accepts it, i.e. the attack sits inside a string literal) compile so that the text is only a parameter.
 */
const REFUSED: string[] = [
  '1=1',
  "' OR '1'='1",
  "' OR 1=1 --",
  "x' OR 'x'='x",
  '1; DROP TABLE users',
  'Id = 1; DROP TABLE users',
  'Id = 1; SELECT pg_sleep(5)',
  'Id = 1;',
  'Id = 1 UNION SELECT password_hash FROM users',
  'Id = 1 UNION ALL SELECT NULL, NULL',
  'Id = 1 --',
  'Id = 1 -- comment',
  'Id = 1 # comment',
  'Id = 1/**/OR/**/1=1',
  'Id = 1 /*! OR 1=1 */',
  'Status = sleep(5)',
  'Id = 1 AND SLEEP(5)',
  'Id = 1 AND pg_sleep(5) IS NULL',
  'pg_sleep(10)',
  "Id = 1 WAITFOR DELAY '0:0:5'",
  "app_name = 'x' OR 1=1",
  "Id = 1 OR 'a'='a'",
  "Id = '1' OR '1' = '1'",
  'Id = -1 OR -1=-1',
  'Id = 1 OR TRUE',
  'Id = 1 OR NOT 0',
  'Id = 1 OR Id = Id',
  'Id = Status',
  'Id = (SELECT 1)',
  'Id IN (SELECT id FROM users)',
  'Id IN (1, (SELECT 1))',
  'Id = 1 AND (SELECT COUNT(*) FROM users) > 0',
  'Id = 1 AND EXISTS(SELECT 1)',
  'Id = 0x41',
  "app_name = CHAR(65)",
  "app_name = CHR(65)||CHR(66)",
  "Id = CAST('1' AS int)",
  "Id::text = '1'",
  "app_name = E'\\x41'",
  "app_name = '\\' OR 1=1 -- '",
  "app_name = 'abc",
  "app_name = '",
  "app_name = \u2018x\u2019 OR \u20181\u2019=\u20181\u2019",
  "app_name = \u02bcx\u02bc",
  'Id = 1\u0000 OR 1=1',
  "app_name = 'a\u0000b'",
  'Id = 1\u00a0OR\u00a01=1',
  'Id = 1\u2028OR 1=1',
  'Id = 1 %00',
  'Id = 1 || 1',
  'Id = 1 && 1',
  'Id = @@version',
  'Id = $1',
  'Id = 1 ORDER BY 1',
  'Id = 1 LIMIT 1',
  'Id = 1e3',
  "app_name LIKE 'a' ESCAPE '!'",
  '"Id" = 1 OR "1"="1"',
  '`Id` = 1 OR `x`=`x`',
  'password_hash IS NOT NULL',
  'Id = 1 AND password_hash IS NOT NULL',
  'users.password_hash = 1',
  'j.id = 1',
  'constructor = 1',
  '__proto__ = 1',
  'Status = NULL OR 1=1',
  "Id BETWEEN 1 AND 2 OR 1 BETWEEN 0 AND 2",
  'app_name LIKE app_name',
  'Id = 1) OR (1=1',
  '(Id = 1',
  "Id = 1 OR app_name = 'x' AND 1",
  `${'Id = 1 OR '.repeat(250)}Id = 1`,
  `${'('.repeat(500)}Id = 1${')'.repeat(500)}`,
  `${'NOT '.repeat(100)}Id = 1`,
  Array.from({ length: 40 }, (_, i) => `Id = ${i}`).join(' OR '),
  `Id IN (${Array.from({ length: 150 }, (_, i) => i).join(',')})`,
  `app_name = '${'x'.repeat(5000)}'`,
];

const ACCEPTED: Array<[string, unknown]> = [
  ["app_name = '1; DROP TABLE users'", '1; DROP TABLE users'],
  ["app_name = 'x'' OR ''1''=''1'", "x' OR '1'='1"],
  ["app_name = 'Robert''); DROP TABLE Students;--'", "Robert'); DROP TABLE Students;--"],
  ["app_name LIKE '%'' UNION SELECT password_hash FROM users --%'", "%' UNION SELECT password_hash FROM users --%"],
  ["app_name = 'a\\'", 'a\\'],
  ["app_name = '/* comment */'", '/* comment */'],
  ["app_name = '-- not a comment'", '-- not a comment'],
  ["app_name = '\u2018 OR \u20191\u2019=\u20191'", '\u2018 OR \u20191\u2019=\u20191'],
  ["app_name = '$1'", '$1'],
  ["app_name = 'pg_sleep(5)'", 'pg_sleep(5)'],
  ["app_name = '\"j\".\"password_hash\"'", '"j"."password_hash"'],
  ["app_name IN ('a', 'b''); DROP', 'c')", "b'); DROP"],
  ["Id = '2'", 2],
];

describe('SQL injection corpus', () => {
  it('has a substantial corpus', () => {
    expect(REFUSED.length + ACCEPTED.length).toBeGreaterThanOrEqual(40);
  });

  it.each(REFUSED.map((text) => [text.length > 80 ? `${text.slice(0, 77)}...` : text, text]))(
    'refuses %j',
    (_label, text) => {
      filterError(() => filterExpression(text, COLUMNS, WHERE));
    },
  );

  it.each(ACCEPTED)('binds %j as a parameter only', (text, expected) => {
    const c = compile(text);
    expectSafeSql(c);
    expect(c.parameters).toContainEqual(expected);
  });
});

describe('fuzzing', () => {
  const vocabulary = [
    'Id', 'Status', 'app_name', 'DateTime', 'Score', 'Active', 'password_hash', '`Id`', '"Status"',
    '=', '<>', '!=', '<', '<=', '>', '>=', 'AND', 'OR', 'NOT', 'LIKE', 'ILIKE', 'IN', 'IS', 'NULL',
    'BETWEEN', 'TRUE', 'FALSE', '(', ')', ',', '1', '-2', '3.5', "'x'", "'2024-01-01'", "'a''b'",
    "'%'", 'SELECT', 'sleep', ';', '--', '/*', '#', '0x41', "'", '*',
  ];

  it('random token soup is either refused or compiles to safe SQL', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...vocabulary), { maxLength: 25 }), (words) => {
        checkSafe(words.join(' '));
      }),
      { numRuns: 3000 },
    );
  });

  it('random strings are either refused or compile to safe SQL', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (text) => {
        checkSafe(text);
      }),
      { numRuns: 1000 },
    );
  });

  function checkSafe(text: string): void {
    let expr: Expression<SqlBool> | undefined;
    try {
      expr = filterExpression(text, COLUMNS, WHERE);
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('invalid_filter');
      return;
    }
    if (expr) expectSafeSql(compileWith(expr));
  }
});

describe('parseFields', () => {
  const all = Object.keys(COLUMNS);

  it('returns every column for missing, empty, blank or *', () => {
    expect(parseFields(undefined, COLUMNS)).toEqual(all);
    expect(parseFields('', COLUMNS)).toEqual(all);
    expect(parseFields('   ', COLUMNS)).toEqual(all);
    expect(parseFields('*', COLUMNS)).toEqual(all);
    expect(parseFields(' * ', COLUMNS)).toEqual(all);
  });

  it('tolerates whitespace, quotes and empty items', () => {
    expect(parseFields(' Id ,\tapp_name ', COLUMNS)).toEqual(['Id', 'app_name']);
    expect(parseFields('Id,,Status,', COLUMNS)).toEqual(['Id', 'Status']);
    expect(parseFields('`Id`, "Status"', COLUMNS)).toEqual(['Id', 'Status']);
  });

  it('matches case-insensitively after exact, returning canonical names', () => {
    expect(parseFields('id,STATUS,App_Name', COLUMNS)).toEqual(['Id', 'Status', 'app_name']);
    const cols: ColumnWhitelist = { id: { column: 'a.id', type: 'int' }, ID: { column: 'b.id', type: 'int' } };
    expect(parseFields('ID,id', cols)).toEqual(['ID', 'id']);
    expect(filterError(() => parseFields('Id', cols)).message).toContain("ambiguous column 'Id'");
  });

  it('deduplicates, keeping first-seen order', () => {
    expect(parseFields('Status, Id, status, ID, Status', COLUMNS)).toEqual(['Status', 'Id']);
    expect(parseFields('app_name, *', COLUMNS)).toEqual(['app_name', ...all.filter((k) => k !== 'app_name')]);
  });

  it('rejects unknown names with the token and position', () => {
    expect(filterError(() => parseFields('Id, password_hash', COLUMNS)).message).toBe(
      "Invalid parameter 'fields': unknown column 'password_hash' at position 4 (0-based)",
    );
    expect(filterError(() => parseFields('constructor', COLUMNS, 'columns')).message).toBe(
      "Invalid parameter 'columns': unknown column 'constructor' at position 0 (0-based)",
    );
  });

  it.each(([
    ['Id Status', "expected ',' between column names but found 'Status' at position 3"],
    ['count(*)', "unknown column 'count' at position 0"],
    ['Id; DROP TABLE users', "statement separator ';' is not allowed at position 2"],
    ['Id -- x', 'comments are not allowed'],
    ["'Id'", "expected a column name but found ''Id'' at position 0"],
    ['1', "expected a column name but found '1'"],
    ['j.id', "unexpected character '.'"],
    [',', 'no column names given'],
    ['x'.repeat(2001), 'the limit is 2000'],
  ] as Array<[string, string]>).map(([text, message]) => [text.length > 60 ? `${text.slice(0, 57)}...` : text, text, message]))(
    'rejects %j',
    (_label, text, message) => {
      expect(filterError(() => parseFields(text, COLUMNS)).message).toContain(message);
    },
  );
});

describe('JSON columns', () => {
  const WITH_JSON: ColumnWhitelist = { ...COLUMNS, Tools: { column: 'j.tool_calls', type: 'json' } };
  const jsonWhere = (text: string) => {
    const expr = filterExpression(text, WITH_JSON, WHERE);
    if (!expr) throw new Error('expected an expression');
    const c = compileWith(expr);
    return { sql: c.sql.slice(PREFIX.length), parameters: c.parameters };
  };

  it('matches LIKE and ILIKE against the JSON text and takes IS [NOT] NULL', () => {
    expect(jsonWhere("Tools LIKE '%predict%'")).toEqual({ sql: '(("j"."tool_calls")::text like $1)', parameters: ['%predict%'] });
    expect(jsonWhere("NOT Tools ILIKE 'x' AND Tools IS NOT NULL")).toEqual({
      sql: '((not ("j"."tool_calls")::text ilike $1) and ("j"."tool_calls")::text is not null)',
      parameters: ['x'],
    });
  });

  it('refuses comparisons, IN and BETWEEN, parsed or hand-built', () => {
    for (const text of ["Tools = '[]'", "'[]' <> Tools", "Tools IN ('a')", "Tools NOT IN ('a')", "Tools BETWEEN 'a' AND 'b'"]) {
      expect(filterError(() => filterExpression(text, WITH_JSON, WHERE)).message, text).toMatch(/is not allowed on 'Tools', which holds JSON/);
    }
    const bad: FilterNode[] = [
      { kind: 'compare', column: 'Tools', op: '=', value: '[]', position: 0 },
      { kind: 'in', column: 'Tools', negated: false, values: ['a'], position: 0 },
      { kind: 'between', column: 'Tools', negated: false, low: 'a', high: 'b', position: 0 },
    ];
    for (const node of bad) expect(filterError(() => compileFilter(node, WITH_JSON, WHERE)).message).toMatch(/holds JSON/);
  });
});
