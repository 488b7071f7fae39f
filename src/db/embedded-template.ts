import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { defaultMigrationsDir, listMigrations, migrate } from './migrator.js';

/**
 * A prepared embedded data directory (a first start in seconds: docs/benchmarks.md, footprint): PGlite's
 * initdb takes seconds and ~430 MB in a child process, so the build makes one data directory once, with the
 * migrations of that time applied, and a new DATA_DIR starts as a copy of it. The copy then opens like a
 * restart and the migrator applies whatever came after the template. A template of another PGlite version is
 * not used (its catalog may not match the server's), and without a template a new directory is made by initdb
 * as before.
 *
 * Only this module's light part is loaded at start: building a template loads the database driver.
 */

interface TemplateMarker {
  pglite: string;
  migrations: string[];
}

const MARKER = 'template.json';
const PGDATA = 'pgdata';

/** dist/embedded-template in the checkout, whether this runs from dist (node) or src (tsx, vitest). */
export function defaultTemplateDir(): string {
  return path.join(path.dirname(defaultMigrationsDir()), 'dist', 'embedded-template');
}

export function installedPGliteVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const manifest = path.join(entry.slice(0, entry.lastIndexOf(`${path.sep}dist${path.sep}`)), 'package.json');
  return (createRequire(import.meta.url)(manifest) as { version: string }).version;
}

async function readMarker(templateDir: string): Promise<TemplateMarker | undefined> {
  try {
    return JSON.parse(await readFile(path.join(templateDir, MARKER), 'utf8')) as TemplateMarker;
  } catch {
    return undefined;
  }
}

async function usable(templateDir: string): Promise<boolean> {
  const marker = await readMarker(templateDir);
  return marker?.pglite === installedPGliteVersion() && existsSync(path.join(templateDir, PGDATA, 'PG_VERSION'));
}

/** True when the template exists for this PGlite with every migration of `migrationsDir` applied. */
export async function templateCurrent(templateDir = defaultTemplateDir(), migrationsDir = defaultMigrationsDir()): Promise<boolean> {
  if (!(await usable(templateDir))) return false;
  const marker = (await readMarker(templateDir))!;
  return JSON.stringify(marker.migrations) === JSON.stringify(await listMigrations(migrationsDir));
}

/**
 * Fills the new, empty data directory `pgdataDir` from the template; false (nothing copied) when there is
 * no usable template. PG_VERSION goes last: a copy cut short leaves a directory that is still "new" and is
 * made again on the next start, not one that looks complete.
 */
export async function copyEmbeddedTemplate(pgdataDir: string, templateDir = defaultTemplateDir()): Promise<boolean> {
  if (!(await usable(templateDir))) return false;
  const source = path.join(templateDir, PGDATA);
  await copyTree(source, pgdataDir, path.join(source, 'PG_VERSION'));
  await copyFile(path.join(source, 'PG_VERSION'), path.join(pgdataDir, 'PG_VERSION'));
  return true;
}

/** Copies a directory tree, its files at once on libuv's pool: fs.cp (JavaScript in Node 20) spent 1.9 s of CPU on the template's 1,100 files, this 0.55 s. */
async function copyTree(from: string, to: string, skip: string): Promise<void> {
  await mkdir(to, { recursive: true });
  const entries = await readdir(from, { withFileTypes: true });
  await Promise.all(
    entries.map(async (entry) => {
      const source = path.join(from, entry.name);
      if (source === skip) return;
      if (entry.isDirectory()) await copyTree(source, path.join(to, entry.name), skip);
      else await copyFile(source, path.join(to, entry.name));
    }),
  );
}

/**
 * Makes the template: initdb, then the migrations, in a directory that replaces `templateDir` only once
 * complete. Run by scripts/ensure-build.mjs after the build.
 */
export async function buildEmbeddedTemplate(templateDir = defaultTemplateDir(), migrationsDir = defaultMigrationsDir()): Promise<TemplateMarker> {
  const { initDataDir, openPGlite } = await import('./database.js');
  const building = `${templateDir}.building-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  try {
    // initdb itself, not a copy of the template being replaced.
    await mkdir(path.join(building, PGDATA), { recursive: true });
    await initDataDir(path.join(building, PGDATA));
    const handle = await openPGlite({ dataDir: path.join(building, PGDATA) });
    try {
      await migrate(handle, migrationsDir);
    } finally {
      await handle.close();
    }
    const marker: TemplateMarker = { pglite: installedPGliteVersion(), migrations: await listMigrations(migrationsDir) };
    await writeFile(path.join(building, MARKER), `${JSON.stringify(marker, null, 2)}\n`);
    await rm(templateDir, { recursive: true, force: true });
    await rename(building, templateDir);
    return marker;
  } catch (error) {
    await rm(building, { recursive: true, force: true });
    throw error;
  }
}
