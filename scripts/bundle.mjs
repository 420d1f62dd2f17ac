// Bundle the compiled server (dist/src/cli.js) into one file, dist/service-sandbox.mjs, which `npm start`,
// the `service-sandbox` bin and the Docker image run (issue 9: cold start). Node 20 spends much of a
// start resolving, reading and compiling several hundred small module files (fastify, zod, pino and
// ours); one file skips that. Packages that read their own files at run time, native ones and the ones
// the server loads only on first use stay outside, loaded from node_modules as before.
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const BUNDLE = path.join(root, 'dist', 'service-sandbox.mjs');

export const EXTERNAL = [
  'better-sqlite3', // native addon
  'pdfkit', // reads its font files next to itself; loaded on the first PDF statement
  'pdfjs-dist', // loaded on the first PDF document upload
  '@fastify/swagger-ui', // serves its own static files; loaded on the first /docs request
  'undici', // loaded on the first webhook delivery
  'fast-xml-parser', // loaded on the first pacs.008 payout
  'csv-stringify',
];

export async function bundle() {
  await build({
    entryPoints: [path.join(root, 'dist', 'src', 'cli.js')],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    // CommonJS packages inside an ES module bundle still call require() for Node's built-ins.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    logLevel: 'warning',
    legalComments: 'none',
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(root, 'scripts', 'bundle.mjs')) await bundle();
