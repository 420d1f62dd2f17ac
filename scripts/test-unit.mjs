// `npm run test:unit`: the fast part of the test suite, for the edit-and-test loop (docs/architecture.md#checks);
// `npm test` still runs every file. A file is left out for what it does, read from its text, not for its name or
// folder, so the choice holds wherever the tests live: a browser test, a test that starts other processes (the
// built server, the CLI, another language's recipe), a test that starts a listening server with its background
// services and real-time waits (`startServer`), or a heavy test named in HEAVY below. Extra arguments go to tap
// (`npm run test:unit -- --reporter=terse`); `--list` prints the files it would run and those it leaves out, and why.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What makes a file slow, found in its text. */
const SLOW_USES = [
  { reason: 'drives chromium', pattern: /helpers\/browser\.js'/ },
  { reason: 'starts other processes', pattern: /helpers\/(server-process|node-child)\.js'|from 'node:child_process'/ },
  { reason: 'starts a listening server', pattern: /\bstartServer\(/ },
];

/** In-process files that are slow all the same (measured: tap prints each file's time), by path. */
const HEAVY = [
  { reason: 'fuzzes every route', pattern: /(^|\/)fuzz\.test\.ts$/ },
  { reason: 'end to end', pattern: /e2e/ },
  { reason: 'renders and parses PDF pages', pattern: /(^|\/)statements-pages\.test\.ts$/ },
];

function testFiles(directory) {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(directory, entry.name);
    if (entry.isDirectory()) return testFiles(file);
    return entry.name.endsWith('.test.ts') ? [file] : [];
  });
}

function whySlow(file) {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return SLOW_USES.find(({ pattern }) => pattern.test(text))?.reason ?? HEAVY.find(({ pattern }) => pattern.test(file))?.reason;
}

const files = testFiles(path.join(ROOT, 'test')).map((file) => path.relative(ROOT, file)).sort();
const left = files.map((file) => ({ file, reason: whySlow(file) })).filter(({ reason }) => reason);
const unit = files.filter((file) => !left.some((slow) => slow.file === file));

if (process.argv.includes('--list')) {
  for (const file of unit) console.log(file);
  for (const { file, reason } of left) console.log(`# left out: ${file} (${reason})`);
} else {
  const tap = path.join(ROOT, 'node_modules', '.bin', 'tap');
  const child = spawn(tap, [...process.argv.slice(2), ...unit], { cwd: ROOT, stdio: 'inherit' });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
