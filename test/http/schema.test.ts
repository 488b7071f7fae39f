import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { openTestDatabase } from '../support/helper.js';

/**
 * src/db/schema.ts is written by hand (one interface per area under src/db/tables); this file keeps it
 * true. It reads the `Database` interface with the TypeScript compiler and compares every table, every
 * column, its nullability, its JavaScript type and whether inserts may omit it (`Generated`) with the
 * migrated database. The per-dataset tables `data_rows_<id>` are created at run time and reached by id
 * with raw SQL only, so they are not part of the interface.
 */

interface DeclaredColumn {
  /** The select type's JavaScript family: number, string, boolean, Date, or json (anything else). */
  family: string;
  nullable: boolean;
  /** Kysely's `Generated<T>`: an insert may leave it out. */
  generated: boolean;
}

const schemaFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/db/schema.ts');

function declaredTables(): Map<string, Map<string, DeclaredColumn>> {
  const program = ts.createProgram([schemaFile], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(schemaFile)!;
  const moduleSymbol = checker.getSymbolAtLocation(source)!;
  const database = checker.getExportsOfModule(moduleSymbol).find((s) => s.name === 'Database')!;
  const databaseType = checker.getDeclaredTypeOfSymbol(database);

  const family = (type: ts.Type): string => {
    const families = new Set<string>();
    for (const part of type.isUnion() ? type.types : [type]) {
      if (part.flags & ts.TypeFlags.Null) continue;
      if (part.flags & (ts.TypeFlags.NumberLike)) families.add('number');
      else if (part.flags & ts.TypeFlags.StringLike) families.add('string');
      else if (part.flags & ts.TypeFlags.BooleanLike) families.add('boolean');
      else if (part.symbol?.name === 'Date') families.add('Date');
      else families.add('json');
    }
    return [...families].sort().join('|');
  };

  const tables = new Map<string, Map<string, DeclaredColumn>>();
  for (const table of checker.getPropertiesOfType(databaseType)) {
    const tableType = checker.getTypeOfSymbol(table);
    const columns = new Map<string, DeclaredColumn>();
    for (const column of checker.getPropertiesOfType(tableType)) {
      const columnType = checker.getTypeOfSymbol(column);
      // ColumnType<S, I, U> (and Generated<S>) carry the select type in `__select__`.
      const select = columnType.getProperty('__select__');
      const insert = columnType.getProperty('__insert__');
      const selectType = select ? checker.getTypeOfSymbol(select) : columnType;
      const insertType = insert ? checker.getTypeOfSymbol(insert) : columnType;
      const parts = (t: ts.Type) => (t.isUnion() ? t.types : [t]);
      columns.set(column.name, {
        family: family(selectType),
        nullable: parts(selectType).some((t) => (t.flags & ts.TypeFlags.Null) !== 0),
        generated: parts(insertType).some((t) => (t.flags & ts.TypeFlags.Undefined) !== 0),
      });
    }
    tables.set(table.name, columns);
  }
  return tables;
}

/** How the drivers of src/db/database.ts hand each Postgres type to JavaScript. */
const FAMILY_OF_DATA_TYPE: Record<string, string> = {
  int2: 'number',
  int4: 'number',
  int8: 'number',
  numeric: 'number',
  float4: 'number',
  float8: 'number',
  text: 'string',
  varchar: 'string',
  bpchar: 'string',
  citext: 'string',
  uuid: 'string',
  bytea: 'json',
  bool: 'boolean',
  timestamptz: 'Date',
  timestamp: 'Date',
  date: 'Date',
  jsonb: 'json',
  json: 'json',
};

let database: DatabaseHandle;
let declared: Map<string, Map<string, DeclaredColumn>>;
let migrated: Map<string, Map<string, { dataType: string; nullable: boolean; hasDefault: boolean }>>;

beforeAll(async () => {
  database = await openTestDatabase();
  declared = declaredTables();
  migrated = new Map();
  for (const table of await database.db.introspection.getTables({ withInternalKyselyTables: false })) {
    if (table.schema !== 'public' || table.isView || /^data_rows_\d+$/.test(table.name)) continue;
    migrated.set(
      table.name,
      new Map(table.columns.map((c) => [c.name, { dataType: c.dataType, nullable: c.isNullable, hasDefault: c.hasDefaultValue || c.isAutoIncrementing }])),
    );
  }
}, 120_000);
afterAll(async () => {
  await database?.close();
});

describe('src/db/schema.ts against the migrated database', () => {
  it('declares every table the migrations create, and no other', () => {
    expect(declared.size).toBeGreaterThan(10);
    expect([...declared.keys()].sort()).toEqual([...migrated.keys()].sort());
  });

  it('declares every column of every table, and no other', () => {
    for (const [table, columns] of migrated) {
      expect([...(declared.get(table)?.keys() ?? [])].sort(), table).toEqual([...columns.keys()].sort());
    }
  });

  it('marks exactly the nullable columns as `| null`', () => {
    const wrong: string[] = [];
    for (const [table, columns] of migrated) {
      for (const [name, column] of columns) {
        const mine = declared.get(table)?.get(name);
        if (mine && mine.nullable !== column.nullable) wrong.push(`${table}.${name}: database ${column.nullable ? 'nullable' : 'not null'}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('gives each column the JavaScript type its driver returns', () => {
    const wrong: string[] = [];
    for (const [table, columns] of migrated) {
      for (const [name, column] of columns) {
        const mine = declared.get(table)?.get(name);
        const expected = FAMILY_OF_DATA_TYPE[column.dataType] ?? `unknown type ${column.dataType}`;
        if (mine && mine.family !== expected) wrong.push(`${table}.${name}: ${column.dataType} is ${expected}, declared ${mine.family}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('lets inserts omit (Generated) only columns the database fills in', () => {
    const wrong: string[] = [];
    for (const [table, columns] of migrated) {
      for (const [name, column] of columns) {
        const mine = declared.get(table)?.get(name);
        if (mine?.generated && !column.hasDefault && !column.nullable) wrong.push(`${table}.${name}: Generated but no default`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
