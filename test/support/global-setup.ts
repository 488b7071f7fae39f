import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openPGlite, openPostgres } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    postgresTemplate: { url: string; template: string; prefix: string };
  }
}

/**
 * Migrates one template database per run; every test file then starts from a copy of it (a PGlite
 * data-dir dump, or a Postgres CREATE DATABASE ... TEMPLATE), which is far cheaper than migrating
 * per file.
 */
export default async function setup(project: TestProject) {
  const kind = project.config.env?.TEST_DB_KIND ?? 'pglite';
  const runId = `${process.pid}_${Date.now().toString(36)}`;
  if (kind === 'pglite') {
    const handle = await openPGlite();
    await migrate(handle);
    const dump = await handle.pglite!.dumpDataDir('none');
    const file = path.join(os.tmpdir(), `mtcs-template-${runId}.tar`);
    await writeFile(file, Buffer.from(await dump.arrayBuffer()));
    await handle.close();
    project.provide('pgliteTemplate', file);
    return;
  }

  const baseUrl = process.env.TEST_DATABASE_URL!;
  const prefix = `mtcs_${runId}`.toLowerCase();
  const template = `${prefix}_tpl`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create database ${template}`);
  const templateUrl = withDatabase(baseUrl, template);
  const handle = openPostgres(templateUrl, { max: 2 });
  await migrate(handle);
  await handle.close();
  project.provide('postgresTemplate', { url: baseUrl, template, prefix });

  return async () => {
    const { rows } = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like $1`,
      [`${prefix}%`],
    );
    for (const { datname } of rows) {
      await admin.query(`drop database if exists ${datname} with (force)`).catch(() => undefined);
    }
    await admin.end();
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
