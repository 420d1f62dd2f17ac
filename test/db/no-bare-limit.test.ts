import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

// docs/benchmarks.md#uncached-reads: a bound `LIMIT ?` makes SQLite prepare the statement again on every run (its
// planner may use the value); `LIMIT +?` keeps the value and the plan. No SQL under src/ binds a bare LIMIT.

const SRC = path.join(import.meta.dirname, '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** A line's code without its comment (`//` to the end, or a whole line of a block comment). */
function codeOf(line: string): string {
  if (/^\s*(\*|\/\*)/.test(line)) return '';
  const comment = line.indexOf('//');
  return comment >= 0 ? line.slice(0, comment) : line;
}

t.test('no bare LIMIT ? in the SQL of src/', async (t) => {
  const files = sourceFiles(SRC);
  t.ok(files.length > 100, `reads the source tree (${files.length} files)`);
  const bare: string[] = [];
  let plus = 0;
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, index) => {
        const code = codeOf(line);
        if (/\bLIMIT\s+\?/.test(code)) bare.push(`${path.relative(SRC, file)}:${index + 1}: ${code.trim()}`);
        if (/\bLIMIT\s+\+\?/.test(code)) plus += 1;
      });
  }
  t.same(bare, [], 'write LIMIT +? (docs/benchmarks.md#uncached-reads)');
  t.ok(plus >= 5, `the paged reads bind LIMIT +? (${plus} places)`);
});

t.test('LIMIT +? and OFFSET +? page as LIMIT ? does', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec('CREATE TABLE numbers (n INTEGER PRIMARY KEY)');
  const insert = db.prepare('INSERT INTO numbers (n) VALUES (?)');
  for (let n = 1; n <= 20; n += 1) insert.run(n);
  const plain = db.prepare('SELECT n FROM numbers ORDER BY n DESC LIMIT ? OFFSET ?').pluck();
  const plus = db.prepare('SELECT n FROM numbers ORDER BY n DESC LIMIT +? OFFSET +?').pluck();
  for (const [limit, offset] of [[5, 0], [5, 15], [7, 18], [0, 0], [3, 40]] as const) {
    t.same(plus.all(limit, offset), plain.all(limit, offset), `LIMIT ${limit} OFFSET ${offset}`);
  }
  t.same(plus.all(3, 2), [18, 17, 16]);
});
