// The committed OpenAPI files (docs/openapi.md#where-it-lives), from the sources (TypeScript run through
// scripts/ts-loader.mjs, no build needed):
// - openapi/examples.json: real answers of the default fixtures, captured by a journey on a fresh app with a
//   frozen clock (captureExamples in scripts/openapi-examples.ts); the document builder only reads this file;
// - openapi/openapi.json: the document the server serves with the default configuration (port 4010);
// - src/client/generated/openapi.ts: the typed client's types, made from the document by scripts/client-types.mjs
//   (docs/clients.md#typescript);
// - openapi/service-sandbox.postman_collection.json: the Postman collection written from it (scripts/postman.mjs).
//   node scripts/openapi.mjs           write them all
//   node scripts/openapi.mjs --check   exit 1 when one differs from what the server answers
// test/http/openapi-static.test.ts and test/http/openapi-examples.test.ts run the same comparisons.
import './ts-loader.mjs';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const STATIC_COPY = path.join(root, 'openapi', 'openapi.json');
export const EXAMPLES = path.join(root, 'openapi', 'examples.json');

export async function capturedExamples() {
  const { captureExamples } = await import('./openapi-examples.ts');
  return `${JSON.stringify(await captureExamples(), null, 2)}\n`;
}

function read(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

export async function servedDocument() {
  const { buildApp } = await import('../src/app.ts');
  const { createContext } = await import('../src/create-context.ts');
  const { createClock } = await import('../src/lib/clock.ts');
  const ctx = createContext({ config: { logLevel: 'silent', db: ':memory:' }, clock: createClock({ mode: 'frozen', atMs: Date.parse('2026-03-01T12:00:00.000Z') }) });
  const { openSandbox } = await import('../src/sandbox.ts');
  const { createSessionRegistry } = await import('../src/sessions/sessions.registry.ts');
  const app = await buildApp(ctx, { sessions: createSessionRegistry(ctx, openSandbox) });
  try {
    const answer = await app.inject({ method: 'GET', url: '/openapi.json' });
    return `${JSON.stringify(JSON.parse(answer.body), null, 2)}\n`;
  } finally {
    await app.close();
    ctx.db.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  mkdirSync(path.dirname(STATIC_COPY), { recursive: true });
  const examples = await capturedExamples();
  if (check && read(EXAMPLES) !== examples) {
    console.error('openapi/examples.json differs from the answers the server gives: run `npm run generate`');
    process.exit(1);
  }
  if (!check) writeFileSync(EXAMPLES, examples);
  // the document reads openapi/examples.json when it is first built, so it is built after the file is written
  const served = await servedDocument();
  if (check && read(STATIC_COPY) !== served) {
    console.error('openapi/openapi.json differs from the served document: run `npm run generate`');
    process.exit(1);
  }
  if (!check) writeFileSync(STATIC_COPY, served);
  // the Postman collection is written from the committed document (scripts/postman.mjs, docs/openapi.md#postman)
  const { COLLECTION, collectionText } = await import('./postman.mjs');
  const collection = collectionText();
  if (check && read(COLLECTION) !== collection) {
    console.error('openapi/service-sandbox.postman_collection.json differs from what scripts/postman.mjs writes: run `npm run generate`');
    process.exit(1);
  }
  if (!check) writeFileSync(COLLECTION, collection);
  console.log(
    check
      ? 'openapi/examples.json, openapi/openapi.json and the Postman collection match the server'
      : `wrote openapi/examples.json, openapi/openapi.json (${Buffer.byteLength(served)} bytes) and openapi/service-sandbox.postman_collection.json`,
  );
  // the client's types follow the document just written (or checked)
  const { clientTypes, CLIENT_TYPES } = await import('./client-types.mjs');
  const types = await clientTypes(served);
  if (check && read(CLIENT_TYPES) !== types) {
    console.error('src/client/generated/openapi.ts differs from openapi/openapi.json: run `npm run generate`');
    process.exit(1);
  }
  if (!check) writeFileSync(CLIENT_TYPES, types);
  console.log(check ? 'src/client/generated/openapi.ts matches the document' : `wrote src/client/generated/openapi.ts (${Buffer.byteLength(types)} bytes)`);
}
