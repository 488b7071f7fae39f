import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { FAMILIES } from '../../src/training/models/candidates.js';

/**
 * The engine's house: src/training is a pure engine. It reaches outside its folder only for node
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

/**
 * The engine's layers, top to bottom: the entry (index.ts, at the root), what runs a job, many series, one series,
 * the choice among candidates, the families, the legacy network (below the families: the network family builds
 * the same brain.js network), the shared statistics, and the vocabulary every layer speaks. A module imports only
 * from its own folder or one below, so a folder can be read knowing only what is under it.
 */
const LAYERS = ['', 'run', 'panel', 'series', 'selection', 'models', 'legacy', 'stats', 'core'];

/** The layer folder of an engine module ('' for a file at the root), e.g. 'series' of 'series/series-run.ts'. */
const layerOf = (module: string) => (module.includes('/') ? module.slice(0, module.indexOf('/')) : '');

/** Arrows that point up the layer order, and modules in a folder the order does not list. */
function layerBreaches(graph: Map<string, string[]>, layers: readonly string[]): string[] {
  const rank = (module: string) => layers.indexOf(layerOf(module));
  const breaches: string[] = [];
  for (const [module, targets] of graph) {
    if (rank(module) < 0) {
      breaches.push(`${module} is in no listed layer`);
      continue;
    }
    for (const target of targets) if (rank(target) < rank(module)) breaches.push(`${module} imports ${target}`);
  }
  return breaches.sort();
}

/** Specifiers of a service-side file that reach into the engine past its entry (index.ts). */
function pastTheEntry(file: string, specifiers: string[]): string[] {
  return specifiers.filter((specifier) => {
    const target = resolveRelative(file, specifier);
    return target !== null && target.startsWith(training + sep) && target !== join(training, 'index.ts');
  });
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
    const specifiers = ['node:fs', 'path', 'brain.js', '@bsull/augurs', '../core/dates.js', './model.js', '../../workers-support.js',
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

  it('finds an arrow up the layers and a module in no layer, and lets arrows down and sideways through', () => {
    const layers = ['', 'run', 'series', 'core'];
    const graph = new Map([
      ['index.ts', ['run/engine.ts']],
      ['run/engine.ts', ['series/series-run.ts', 'run/pool.ts', 'core/types.ts']],
      ['run/pool.ts', []],
      ['series/series-run.ts', ['core/types.ts', 'run/pool.ts']],
      ['core/types.ts', ['index.ts']],
      ['extra/x.ts', ['core/types.ts']],
    ]);
    expect(layerBreaches(graph, layers)).toEqual(['core/types.ts imports index.ts', 'extra/x.ts is in no listed layer', 'series/series-run.ts imports run/pool.ts']);
    expect(layerOf('index.ts')).toBe('');
    expect(layerOf('models/stl.ts')).toBe('models');
  });

  it('tells the entry from the inside of the engine, for the service side', () => {
    const file = join(root, 'src', 'domain', 'jobs', 'x.ts');
    expect(pastTheEntry(file, ['../../training/index.js', '../../training/run/pool.js', '../../db/database.js', 'piscina'])).toEqual(['../../training/run/pool.js']);
  });
});

describe('src/training is a pure engine', () => {
  const { graph, forbidden } = trainingGraph();

  it('walks the whole engine', () => {
    expect(graph.has('run/engine.ts')).toBe(true);
    expect(graph.has('models/model.ts')).toBe(true);
    expect(graph.get('run/engine.ts')?.length).toBeGreaterThan(3);
  });

  it('imports nothing outside src/training but builtins, packages and ../workers-support.js', () => {
    expect(forbidden).toEqual([]);
  });

  it('has no import circle', () => {
    expect(circlesOf(graph)).toEqual([]);
  });

  it('imports only from its own layer or one below', () => {
    expect(layerBreaches(graph, LAYERS)).toEqual([]);
  });

  it('has every layer the order lists (a renamed folder is renamed in the order too)', () => {
    expect(LAYERS.filter((layer) => ![...graph.keys()].some((module) => layerOf(module) === layer))).toEqual([]);
  });
});

/**
 * Specifiers of a benchmark that reach into the engine past its entry and its testing export (testing.ts: the
 * few inner pieces a benchmark measures on their own), so the engine's inside moves without bench/ noticing.
 */
function pastTheBenchEntries(file: string, specifiers: string[]): string[] {
  const entries = new Set([join(training, 'index.ts'), join(training, 'testing.ts')]);
  return specifiers.filter((specifier) => {
    const target = resolveRelative(file, specifier);
    return target !== null && target.startsWith(training + sep) && !entries.has(target);
  });
}

describe('benchmarks reach the engine only through its entry and its testing export', () => {
  it('tells the two entries from the inside of the engine (known answers)', () => {
    const file = join(root, 'bench', 'forecast', 'x.ts');
    expect(pastTheBenchEntries(file, ['../../src/training/index.js', '../../src/training/testing.js', '../../src/training/models/global.js', '../../src/db/database.js', '../support.js']))
      .toEqual(['../../src/training/models/global.js']);
  });

  it('imports src/training/index.ts and testing.ts and nothing else inside it', () => {
    const bench = join(root, 'bench');
    const files = sourceFiles(bench).filter((file) => !relative(bench, file).startsWith('.'));
    expect(files.length).toBeGreaterThan(10);
    const inside = files.flatMap((file) => pastTheBenchEntries(file, specifiersOf(readFileSync(file, 'utf8'))).map((specifier) => `${relative(root, file)} imports ${specifier}`));
    expect(inside).toEqual([]);
  });
});

describe('the service side reaches the engine only through its entry', () => {
  it('imports src/training/index.ts and nothing inside it', () => {
    const inside = sourceFiles(join(root, 'src'))
      .filter((file) => !file.startsWith(training + sep))
      .flatMap((file) => pastTheEntry(file, specifiersOf(readFileSync(file, 'utf8'))).map((specifier) => `${relative(root, file)} imports ${specifier}`));
    expect(inside).toEqual([]);
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
