// The static copy of the OpenAPI document, openapi/openapi.json (docs/openapi.md#where-it-lives): the
// document the built server serves with the default configuration (port 4010), pretty-printed.
//   node scripts/openapi.mjs           write it
//   node scripts/openapi.mjs --check   exit 1 when it differs from what the server serves
// Needs a build (npm run build); test/openapi-static.test.ts runs the same comparison from the sources.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const STATIC_COPY = path.join(root, 'openapi', 'openapi.json');

export async function servedDocument() {
  const { buildApp } = await import(path.join(root, 'dist/src/app.js'));
  const { createContext } = await import(path.join(root, 'dist/src/context.factory.js'));
  const { createClock } = await import(path.join(root, 'dist/src/lib/clock.js'));
  const ctx = createContext({ config: { logLevel: 'silent', db: ':memory:' }, clock: createClock({ mode: 'frozen', atMs: Date.parse('2026-03-01T12:00:00.000Z') }) });
  const app = await buildApp(ctx);
  try {
    const answer = await app.inject({ method: 'GET', url: '/openapi.json' });
    return `${JSON.stringify(JSON.parse(answer.body), null, 2)}\n`;
  } finally {
    await app.close();
    ctx.db.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const served = await servedDocument();
  if (process.argv.includes('--check')) {
    let stored = '';
    try {
      stored = readFileSync(STATIC_COPY, 'utf8');
    } catch {
      // missing: reported below
    }
    if (stored !== served) {
      console.error('openapi/openapi.json differs from the served document: run `npm run build && node scripts/openapi.mjs`');
      process.exit(1);
    }
    console.log('openapi/openapi.json matches the served document');
  } else {
    mkdirSync(path.dirname(STATIC_COPY), { recursive: true });
    writeFileSync(STATIC_COPY, served);
    console.log(`wrote ${path.relative(root, STATIC_COPY)} (${Buffer.byteLength(served)} bytes)`);
  }
}
