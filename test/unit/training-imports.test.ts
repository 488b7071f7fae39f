import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { FAMILIES } from '../../src/training/models/candidates.js';

/**
 * The engine's house (issue 28): src/training is a pure engine. It reaches outside its folder only for node
 * builtins, packages and the generic thread helper, never for the service side (domain, db, http, api,
 * config, observability), and its own import graph has no circle, so every arrow points down.
 *
 * Type-only imports count as edges too: a type import still says which module knows about which, and a
 * circle of types is where a value circle starts the next time someone needs a constant.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const training = join(root, 'src', 'training');

/** Files outside src/training the engine may import (repository-relative). */
const ALLOWED_OUTSIDE = new Set(['src/workers-support.ts']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every specifier of a file: static imports, `export ... from`, import('...') and import type. */
function specifiersOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((ref) => ref.fileName);
}

/** The file a relative specifier names (the `.js` of an ESM import is the `.ts` on disk), else null. */
function resolveRelative(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  return resolve(dirname(from), specifier).replace(/\.js$/, '.ts');
}

const builtins = new Set(builtinModules);
const isBuiltin = (specifier: string) => specifier.startsWith('node:') || builtins.has(specifier);

/** Specifiers of `file` that leave src/training for something not on the allow-list. */
function forbiddenImports(file: string, specifiers: string[]): string[] {
  return specifiers.filter((specifier) => {
    if (isBuiltin(specifier)) return false;
    const target = resolveRelative(file, specifier);
    if (target === null) return specifier.startsWith('/'); // a bare name is a package
    if (target.startsWith(training + sep)) return false;
    return !ALLOWED_OUTSIDE.has(relative(root, target).split(sep).join('/'));
  });
}

/**
 * Every circle of the graph at once: its strongly connected components of more than one module (or a module
 * importing itself), each sorted, so a failure names every module to untangle, not just the first loop found.
 */
function circlesOf(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) circles.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return circles.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}

function trainingGraph(): { graph: Map<string, string[]>; forbidden: string[] } {
  const graph = new Map<string, string[]>();
  const forbidden: string[] = [];
  for (const file of sourceFiles(training)) {
    const name = relative(training, file).split(sep).join('/');
    const specifiers = specifiersOf(readFileSync(file, 'utf8'));
    for (const specifier of forbiddenImports(file, specifiers)) forbidden.push(`${name} imports ${specifier}`);
    const inside = specifiers
      .map((specifier) => resolveRelative(file, specifier))
      .filter((target): target is string => target !== null && target.startsWith(training + sep))
      .map((target) => relative(training, target).split(sep).join('/'));
    graph.set(name, [...new Set(inside)].sort());
  }
  return { graph, forbidden };
}

describe('the import walker (known answers, so the checks below cannot pass vacuously)', () => {
  it('reads static, type-only, re-export, side-effect and dynamic imports, across lines', () => {
    const text = [
      "import a from './a.js';",
      "import type { B } from '../domain/b.js';",
      'import {',
      '  c,',
      '  type D,',
      "} from './c.js';",
      "export { e } from './e.js';",
      "export * from './f.js';",
      "import './g.js';",
      "const h = await import('./h.js');",
      "// import x from './commented.js';",
    ].join('\n');
    expect(specifiersOf(text)).toEqual(['./a.js', '../domain/b.js', './c.js', './e.js', './f.js', './g.js', './h.js']);
  });

  it('lets builtins, packages, the engine itself and the thread helper through, and nothing else', () => {
    const file = join(training, 'models', 'x.ts');
    const specifiers = ['node:fs', 'path', 'brain.js', '@bsull/augurs', '../dates.js', './model.js', '../../workers-support.js',
      '../../domain/jobs/jobs.service.js', '../../config.js', '../../db/database.js', '../../spool-files.js'];
    expect(forbiddenImports(file, specifiers)).toEqual([
      '../../domain/jobs/jobs.service.js', '../../config.js', '../../db/database.js', '../../spool-files.js',
    ]);
  });

  it('finds every circle, including a module importing itself, and none in a tree', () => {
    const tangled = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a', 'e']], ['e', ['f']], ['f', ['e']], ['g', ['g']]]);
    expect(circlesOf(tangled)).toEqual([['a', 'b', 'c'], ['e', 'f'], ['g']]);
    expect(circlesOf(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]]))).toEqual([]);
  });
});

describe('src/training is a pure engine', () => {
  const { graph, forbidden } = trainingGraph();

  it('walks the whole engine', () => {
    expect(graph.has('engine.ts')).toBe(true);
    expect(graph.has('models/model.ts')).toBe(true);
    expect(graph.get('engine.ts')?.length).toBeGreaterThan(3);
  });

  it('imports nothing outside src/training but builtins, packages and ../workers-support.js', () => {
    expect(forbidden).toEqual([]);
  });

  it('has no import circle', () => {
    expect(circlesOf(graph)).toEqual([]);
  });
});

/**
 * What a family is lives on the family (models/model.ts FamilyTraits): a list of family names elsewhere is a second
 * place a new family must be added to, which is forgotten. An array literal (a Set's too) of two or more names of
 * registered families, in a module outside models/.
 */
function familyNameLists(text: string, names: ReadonlySet<string>): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isArrayLiteralExpression(node)) {
      const named = node.elements.filter((e) => ts.isStringLiteralLike(e) && names.has(e.text));
      if (named.length >= 2) found.push(node.getText());
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('module.ts', text, ts.ScriptTarget.Latest, true));
  return found;
}

describe('a family is described in one place', () => {
  const names = new Set(FAMILIES.map((f) => f.name));

  it('finds a list of family names, and not other strings (known answers)', () => {
    const text = ["const a = new Set(['naive', 'drift']);", "const b = ['annual', 'quarterly'];", "const c = x === 'naive' || y === 'drift';", "const d = [['mean', 1], 'median'];"].join('\n');
    expect(familyNameLists(text, names)).toEqual(["['naive', 'drift']"]);
  });

  it('lists no family names outside models/', () => {
    const lists = sourceFiles(training)
      .filter((file) => !file.startsWith(join(training, 'models') + sep))
      .flatMap((file) => familyNameLists(readFileSync(file, 'utf8'), names).map((list) => `${relative(training, file)}: ${list}`));
    expect(lists).toEqual([]);
  });
});
