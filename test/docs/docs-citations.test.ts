import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

// Comments cite this repository's own docs (docs/architecture.md#comments-cite-the-docs), never a document
// a reader of the repository cannot open: the emulator's outside contract, design notes or issue numbers.
// This test keeps it so. It scans the code and test trees
// and fails listing file:line for
//   1. a citation of an outside document (the patterns below), and
//   2. a `docs/<page>.md#<anchor>` or `README.md#<anchor>` whose page is missing or has no heading that
//      produces the anchor (GitHub's rule: lower case, punctuation dropped, spaces to hyphens).

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SELF = path.relative(ROOT, fileURLToPath(import.meta.url));
const SCANNED_DIRS = ['src', 'test', 'scripts', 'bench', '.ci', 'clients'];
const SCANNED_FILES = ['Dockerfile'];
const TEXT_EXTENSIONS = new Set(['.ts', '.js', '.mjs', '.cjs', '.html', '.css', '.json', '.md', '.py', '.go', '.java', '.sh', '.toml', '']);

/** Citations of documents outside the repository. Built from parts so this file does not match itself. */
const OUTSIDE_CITATIONS: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'contract section', pattern: new RegExp(['[Cc]ontract', ' (?:[0-9]+|\u00a7)'].join('')) },
  { name: 'issue number', pattern: new RegExp(['[Ii]ssue', ' [0-9]+'].join('')) },
  { name: 'contract file', pattern: new RegExp(['CONTRACT', '\\.md'].join('')) },
  { name: 'developer notes', pattern: new RegExp(['DEVELO', 'PERS'].join('')) },
  { name: 'design notes', pattern: new RegExp(['DES', 'IGN\\b'].join('')) },
];

const DOC_LINK = /\b((?:docs\/)?[A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?/g;

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    // Generated output (the typed client's copies of the served document) is not written by people: the
    // text it holds comes from the sources scanned here.
    if (name === 'node_modules' || name === 'dist' || name === 'generated') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listFiles(full));
    else if (TEXT_EXTENSIONS.has(path.extname(name))) out.push(full);
  }
  return out;
}

function scannedFiles(): string[] {
  const files: string[] = [];
  for (const dir of SCANNED_DIRS) if (existsSync(path.join(ROOT, dir))) files.push(...listFiles(path.join(ROOT, dir)));
  for (const file of SCANNED_FILES) if (existsSync(path.join(ROOT, file))) files.push(path.join(ROOT, file));
  return files.map((file) => path.relative(ROOT, file)).filter((file) => file !== SELF).sort();
}

/** GitHub's heading anchor: lower case, punctuation dropped (hyphens and underscores kept), spaces to hyphens. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/**
 * Every anchor a Markdown page offers, outside fenced code blocks: its headings (duplicates numbered) and
 * explicit HTML anchors (`<a id="name"></a>`, as docs/openapi.md uses on list items).
 */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const fenceMatch = /^\s*(```|~~~)/.exec(line);
    if (fenceMatch) {
      if (fence === null) fence = fenceMatch[1]!;
      else if (fenceMatch[1] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    for (const html of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(html[1]!);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = headingAnchor(heading[1]!);
    const count = seen.get(base) ?? 0;
    anchors.add(count === 0 ? base : `${base}-${count}`);
    seen.set(base, count + 1);
  }
  return anchors;
}

const anchorCache = new Map<string, Set<string> | null>();
function pageAnchors(page: string): Set<string> | null {
  if (!anchorCache.has(page)) {
    const file = path.join(ROOT, page);
    anchorCache.set(page, existsSync(file) ? anchorsOf(readFileSync(file, 'utf8')) : null);
  }
  return anchorCache.get(page)!;
}

/** Problems in one file's text: outside citations, and links to a missing page or anchor of this repository. */
function problemsIn(file: string, text: string): string[] {
  const problems: string[] = [];
  text.split('\n').forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    for (const { name, pattern } of OUTSIDE_CITATIONS) {
      const match = pattern.exec(line);
      if (match) problems.push(`${where}: cites an outside document (${name}: "${match[0]}"): ${line.trim()}`);
    }
    for (const link of line.matchAll(DOC_LINK)) {
      const page = link[1]!;
      // Only pages of this repository: docs/<page>.md and the root README.md.
      if (!page.startsWith('docs/') && page !== 'README.md') continue;
      const anchors = pageAnchors(page);
      if (anchors === null) problems.push(`${where}: ${page} does not exist`);
      else if (link[2] !== undefined && !anchors.has(link[2])) problems.push(`${where}: ${page} has no heading for #${link[2]}`);
    }
  });
  return problems;
}

t.test('the anchor rule and the checker itself', async (t) => {
  t.equal(headingAnchor('Fuzzing (`test/http/fuzz.test.ts`)'), 'fuzzing-testhttpfuzztestts');
  t.equal(headingAnchor('Change sync (interface 4.5)'), 'change-sync-interface-45');
  t.equal(headingAnchor('reset-and-the-clock'), 'reset-and-the-clock');
  t.same(problemsIn('x.ts', '// docs/decisions.md#reset and README.md#default-fixture-credentials'), [], 'real anchors pass');
  t.same(problemsIn('x.ts', '// docs/openapi.md#formats'), [], 'an explicit HTML anchor counts');
  const planted = problemsIn('x.ts', ['// ok', `// see ${'con'}tract 4 and docs/decisions.md#no-such-anchor`, '// docs/nope.md'].join('\n'));
  t.same(
    planted.map((problem) => problem.split(':').slice(0, 2).join(':')),
    ['x.ts:2', 'x.ts:2', 'x.ts:3'],
    'an outside citation, a missing anchor and a missing page are each reported with file:line',
  );
});

t.test('comments cite this repository only, and every cited docs anchor exists', async (t) => {
  const files = scannedFiles();
  t.ok(files.length > 100, `scans the code and test trees (${files.length} files)`);
  const problems = files.flatMap((file) => problemsIn(file, readFileSync(path.join(ROOT, file), 'utf8')));
  t.same(problems, [], problems.length === 0 ? 'no outside citations, no broken anchors' : problems.join('\n'));
});
