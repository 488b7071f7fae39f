import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openPGlite } from '../../src/db/database.js';
import { CURRENT, OLDER, createTestContext } from '../support/helper.js';
import { enumerateRoutes } from '../support/routes.js';

/**
 * The documents describe the tree as it is (so a reader can follow every name and link they give):
 * - docs/architecture.md names every folder under src/ by its path (`src/domain/charts/`);
 * - its table "Where each operation lives" lists every route of both versions the app registers, and no other;
 * - every relative link of every Markdown file at the repository's root and under docs/ reaches a file, and a
 *   link's anchor into a Markdown file reaches one of its headings;
 * - code, tests, benchmarks and documents cite a reason or a docs/benchmarks.md section, never a numbered
 *   working session.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const posix = (path: string) => path.split(sep).join('/');

function directoriesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      return [path, ...directoriesUnder(path)];
    });
}

function filesUnder(dir: string, skip: (path: string) => boolean = () => false): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (skip(path) || entry.name === 'node_modules') return [];
    if (entry.isDirectory()) return filesUnder(path, skip);
    return entry.isFile() ? [path] : [];
  });
}

/** Markdown files at the repository's root and everywhere under docs/. */
export function markdownFiles(): string[] {
  const atRoot = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => join(root, entry.name));
  return [...atRoot, ...filesUnder(join(root, 'docs')).filter((path) => path.endsWith('.md'))];
}

/** The text with fenced code blocks and inline code spans blanked out (links there are examples, not links). */
function withoutCode(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/(`+)[\s\S]*?\1/g, '');
}

/** Every link target of a Markdown text: inline links and images `[text](target)`, and `[label]: target`. */
export function linkTargets(markdown: string): string[] {
  const text = withoutCode(markdown);
  const inline = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const references = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]!);
  return [...inline, ...references];
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const plain = match[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[`*]/g, '');
    const slug = plain.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Broken relative links of one Markdown file, as `file: target (why)`. */
export function brokenLinks(file: string): string[] {
  const markdown = readFileSync(file, 'utf8');
  const broken: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: ...
    const [pathPart = '', anchor] = target.split('#', 2);
    const path = decodeURIComponent(pathPart);
    const resolved = path === '' ? file : resolve(dirname(file), path);
    const name = `${posix(relative(root, file))}: ${target}`;
    if (!existsSync(resolved)) {
      broken.push(`${name} (no such file)`);
      continue;
    }
    if (anchor !== undefined && anchor !== '' && resolved.endsWith('.md') && statSync(resolved).isFile()) {
      if (!headingAnchors(readFileSync(resolved, 'utf8')).has(anchor.toLowerCase())) broken.push(`${name} (no such heading)`);
    }
  }
  return broken;
}

/** `grep -rniE "session [0-9]"` over src, test, bench, docs and README.md. */
export function sessionMentions(): string[] {
  const files = [...['src', 'test', 'bench', 'docs'].flatMap((dir) => filesUnder(join(root, dir))), join(root, 'README.md')];
  const pattern = /session [0-9]/i;
  return files.flatMap((file) => {
    const bytes = readFileSync(file);
    if (bytes.includes(0)) return []; // binary (images, fonts)
    return bytes
      .toString('utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${posix(relative(root, file))}:${i + 1}: ${line.trim().slice(0, 120)}`] : []));
  });
}

describe('docs/architecture.md matches the tree', () => {
  it('names every folder under src/ by its path', () => {
    const architecture = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
    const folders = directoriesUnder(join(root, 'src')).map((dir) => `${posix(relative(root, dir))}/`);
    expect(folders.length).toBeGreaterThan(10);
    expect(folders.filter((folder) => !architecture.includes(folder))).toEqual([]);
  });
});

/**
 * The operations the table of "Where each operation lives" lists, as `METHOD /prefix/resource.php`: a row
 * `| \`METHOD /resource.php\` | current routes file or — | older routes file or — | ...` stands for the
 * operation under each version whose column names a file.
 */
function documentedRoutes(markdown: string): string[] {
  const section = /^## Where each operation lives\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(markdown)?.[1] ?? '';
  return [...section.matchAll(/^\| `([A-Z]+) (\/\S+)` \|([^|]*)\|([^|]*)\|/gm)].flatMap((row) => {
    const [, method, path, current, older] = row as unknown as [string, string, string, string, string];
    return [
      ...(current.trim() === '—' ? [] : [`${method} ${CURRENT}${path}`]),
      ...(older.trim() === '—' ? [] : [`${method} ${OLDER}${path}`]),
    ];
  });
}

describe('docs/architecture.md lists every route', () => {
  it('its table of operations names every route of both versions the app registers, and no other', async () => {
    // The app is built as the HTTP suites build it; no request is served, so an empty database does.
    const database = await openPGlite();
    const ctx = await createTestContext({ database });
    const registered = [...new Set(enumerateRoutes(ctx.app).map((route) => `${route.method} ${route.url}`))].sort();
    await ctx.close();
    await database.close();
    const documented = documentedRoutes(readFileSync(join(root, 'docs', 'architecture.md'), 'utf8')).sort();
    expect(registered.length).toBeGreaterThan(50);
    expect({
      missingFromTheTable: registered.filter((route) => !documented.includes(route)),
      inTheTableButNotRegistered: documented.filter((route) => !registered.includes(route)),
    }).toEqual({ missingFromTheTable: [], inTheTableButNotRegistered: [] });
  });

  it('reads a row once per version whose column names a routes file', () => {
    const table = [
      '## Where each operation lives',
      '| Operation | Current | Older | Service | Repository |',
      '|---|---|---|---|---|',
      '| `GET /a.php` | 202203010900/a.routes.ts | 202111101200/a.routes.ts | s | r |',
      '| `POST /b.php` | — | 202111101200/b.routes.ts | s | r |',
      '| `PUT /c.php` | shared/c.routes.ts | — | s | r |',
      '## Next',
      '| `GET /d.php` | 202203010900/d.routes.ts | — | s | r |',
      '',
    ].join('\n');
    expect(documentedRoutes(table)).toEqual([`GET ${CURRENT}/a.php`, `GET ${OLDER}/a.php`, `POST ${OLDER}/b.php`, `PUT ${CURRENT}/c.php`]);
  });
});

describe('Markdown links', () => {
  it('finds the documents and their links', () => {
    const files = markdownFiles().map((file) => posix(relative(root, file)));
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'docs/benchmarks.md', 'docs/interface-notes.md']));
    expect(linkTargets(readFileSync(join(root, 'README.md'), 'utf8'))).toContain('docs/benchmarks.md');
  });

  it('every relative link of the root and docs/ Markdown files reaches a file (and its heading)', () => {
    expect(markdownFiles().flatMap(brokenLinks)).toEqual([]);
  });

  it('reads links and anchors as GitHub does', () => {
    expect(linkTargets('see [a](docs/a.md#x-y), ![img](img/b.png "t"), `[not](code.md)`\n\n[ref]: ../c.md\n')).toEqual([
      'docs/a.md#x-y',
      'img/b.png',
      '../c.md',
    ]);
    expect([...headingAnchors('# A title\n## intervals: coverage of the 80% and 95% bands\n## A title\n```\n# not a heading\n```\n')]).toEqual([
      'a-title',
      'intervals-coverage-of-the-80-and-95-bands',
      'a-title-1',
    ]);
  });
});

describe('no numbered working sessions', () => {
  it('code, tests, benchmarks and documents cite a reason or a docs/benchmarks.md section instead', () => {
    expect(sessionMentions()).toEqual([]);
  });
});
