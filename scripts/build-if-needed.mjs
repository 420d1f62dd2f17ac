// `npm start` builds first when dist/ is missing or older than any source file.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The bundle is written last, so it is the build's finishing mark.
const marker = path.join(root, 'dist', 'service-sandbox.mjs');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

const stale = !existsSync(marker) || newestMtime(path.join(root, 'src')) > statSync(marker).mtimeMs
  || statSync(path.join(root, 'tsconfig.json')).mtimeMs > statSync(marker).mtimeMs;
if (stale) {
  process.stdout.write('building service-sandbox (tsc, then the bundle)...\n');
  execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
  const { bundle, schemaImage } = await import('./bundle.mjs');
  await schemaImage();
  await bundle();
}
