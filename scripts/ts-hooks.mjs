// Module hooks that run the TypeScript of the tests (and the src/ files they import) straight from source,
// each file transpiled by esbuild, no type checking (docs/architecture.md#how-the-typescript-of-the-tests-runs). Registered by
// scripts/ts-loader.mjs, which tap adds to every test process (package.json "tap" "node-arg").
//
// Why not tap's own TypeScript loader (ts-node): it loads the TypeScript compiler into every test process and
// transpiles with it, about 1 s of CPU before a test starts plus about 3 s for the files a test imports; with
// some 60 test files on two cores that was a third of the CI run. esbuild transpiles the same files in
// milliseconds; the output is cached by content, so the next test process reads it instead.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TS = /\.m?ts$/;
const RELATIVE_JS = /^\.{1,2}\/.*\.(m?)js$/;
const CACHE = fileURLToPath(new URL('../node_modules/.cache/service-sandbox-ts/', import.meta.url));

// The compiler options that change the emitted JavaScript (class fields follow the target) come from tsconfig.json,
// as they do for tsc.
const tsconfigRaw = (() => {
  const { compilerOptions = {} } = JSON.parse(readFileSync(new URL('../tsconfig.json', import.meta.url), 'utf8'));
  const { target, useDefineForClassFields, verbatimModuleSyntax } = compilerOptions;
  return { compilerOptions: { target, useDefineForClassFields, verbatimModuleSyntax } };
})();
// Source maps without the sources' text: stack traces and coverage name the .ts file and line, and read it from disk.
const TRANSFORM = { loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', sourcesContent: false, tsconfigRaw };
// esbuild is loaded on the first file not in the cache (its version read from its package.json, for the key).
const ESBUILD_VERSION = JSON.parse(readFileSync(new URL('../node_modules/esbuild/package.json', import.meta.url), 'utf8')).version;
const OPTIONS_KEY = `${ESBUILD_VERSION}\0${JSON.stringify(TRANSFORM)}`;
let esbuild;

/** A NodeNext source imports its siblings by their emitted name (`./app.js`): from a .ts file that means the .ts. */
export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  if (parent?.startsWith('file:') && TS.test(parent) && !parent.includes('/node_modules/')) {
    const match = RELATIVE_JS.exec(specifier);
    if (match) {
      const candidate = new URL(`${specifier.slice(0, -(match[1].length + 2))}${match[1]}ts`, parent);
      if (existsSync(candidate)) return nextResolve(candidate.href, context);
    }
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !TS.test(url) || url.includes('/node_modules/')) return nextLoad(url, context);
  const filename = fileURLToPath(url);
  const source = readFileSync(filename, 'utf8');
  const cached = path.join(CACHE, `${createHash('sha256').update(`${OPTIONS_KEY}\0${filename}\0`).update(source).digest('hex')}.js`);
  try {
    return { format: 'module', source: readFileSync(cached, 'utf8'), shortCircuit: true };
  } catch {
    // not transpiled yet
  }
  esbuild ??= await import('esbuild');
  const { code } = await esbuild.transform(source, { ...TRANSFORM, sourcefile: filename });
  try {
    mkdirSync(CACHE, { recursive: true });
    const partial = `${cached}.${process.pid}.tmp`;
    writeFileSync(partial, code);
    renameSync(partial, cached); // whole or absent, for the test processes that run beside this one
  } catch {
    // a read-only node_modules: no cache, still correct
  }
  return { format: 'module', source: code, shortCircuit: true };
}
