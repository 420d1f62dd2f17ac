// Writes clients/signing-vectors.json, the signing and verification test vectors every kit runs
// (docs/clients.md#test-vectors), from the reference implementation (scripts/signing-vectors.ts).
//   node scripts/signing-vectors.mjs           write the file
//   node scripts/signing-vectors.mjs --check   exit 1 when the committed file differs
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import './ts-loader.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const VECTORS = path.join(root, 'clients', 'signing-vectors.json');

const { signingVectors } = await import('./signing-vectors.ts');
const text = signingVectors();
if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(VECTORS, 'utf8');
  } catch {}
  if (committed !== text) {
    console.error(`${path.relative(root, VECTORS)} differs from what scripts/signing-vectors.ts gives: run npm run generate`);
    process.exit(1);
  }
} else {
  writeFileSync(VECTORS, text);
  console.log(`wrote ${path.relative(root, VECTORS)}`);
}
