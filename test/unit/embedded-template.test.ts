import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGlite } from '../../src/db/database.js';
import { buildEmbeddedTemplate, copyEmbeddedTemplate, installedPGliteVersion, templateCurrent } from '../../src/db/embedded-template.js';
import { defaultMigrationsDir, listMigrations, migrate } from '../../src/db/migrator.js';

/**
 * The embedded database's template (a first start in seconds: docs/benchmarks.md, footprint): a new data
 * directory copied from it opens like a restart and the migrator still applies every migration the template
 * does not hold. The template here is built from the first migrations only, as one built before the later
 * ones were written.
 */
const KEPT = 3;
let work: string;
let olderMigrations: string;
let template: string;
let all: string[];

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'embedded-template-'));
  all = await listMigrations();
  olderMigrations = path.join(work, 'migrations');
  mkdirSync(olderMigrations);
  for (const file of all.slice(0, KEPT)) copyFileSync(path.join(defaultMigrationsDir(), file), path.join(olderMigrations, file));
  template = path.join(work, 'template');
  await buildEmbeddedTemplate(template, olderMigrations);
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('embedded database template', () => {
  it('records the PGlite version and the migrations it holds, and is current only for those', async () => {
    expect(JSON.parse(readFileSync(path.join(template, 'template.json'), 'utf8'))).toEqual({ pglite: installedPGliteVersion(), migrations: all.slice(0, KEPT) });
    expect(await templateCurrent(template, olderMigrations)).toBe(true);
    expect(await templateCurrent(template, defaultMigrationsDir())).toBe(false);
    expect(existsSync(`${template}.building-${process.pid}`)).toBe(false);
  });

  it('gives a new data directory that opens, and the migrator applies the migrations written after it', async () => {
    const pgdata = path.join(work, 'data-1', 'pgdata');
    mkdirSync(pgdata, { recursive: true });
    expect(await copyEmbeddedTemplate(pgdata, template)).toBe(true);
    const handle = await openPGlite({ dataDir: pgdata });
    try {
      expect(await migrate(handle)).toEqual(all.slice(KEPT));
      const recorded = await handle.pglite!.query<{ name: string }>('select name from schema_migrations order by name');
      expect(recorded.rows.map((r) => r.name)).toEqual(all);
      // A table the template brought (0001) and ones only the later migrations make (0020).
      const tables = await handle.pglite!.query<{ table_name: string }>(
        "select table_name from information_schema.tables where table_name in ('users', 'jobs', 'trainings') order by table_name",
      );
      expect(tables.rows.map((r) => r.table_name)).toEqual(['jobs', 'trainings', 'users']);
    } finally {
      await handle.close();
    }
    // Reopened, as on a restart: nothing left to apply.
    const again = await openPGlite({ dataDir: pgdata });
    try {
      expect(await migrate(again)).toEqual([]);
    } finally {
      await again.close();
    }
  }, 120_000);

  it('is not used for another PGlite version, and copies nothing then', async () => {
    const other = path.join(work, 'template-other');
    mkdirSync(other);
    writeFileSync(path.join(other, 'template.json'), JSON.stringify({ pglite: '0.0.1', migrations: all.slice(0, KEPT) }));
    mkdirSync(path.join(other, 'pgdata'));
    writeFileSync(path.join(other, 'pgdata', 'PG_VERSION'), '17\n');
    const pgdata = path.join(work, 'data-2', 'pgdata');
    mkdirSync(pgdata, { recursive: true });
    expect(await copyEmbeddedTemplate(pgdata, other)).toBe(false);
    expect(await copyEmbeddedTemplate(pgdata, path.join(work, 'no-template'))).toBe(false);
    expect(readdirSync(pgdata)).toEqual([]);
  });
});
