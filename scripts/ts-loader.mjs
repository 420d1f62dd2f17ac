// `node --import=./scripts/ts-loader.mjs file.ts` runs a TypeScript file from source (scripts/ts-hooks.mjs);
// tap adds it to every test process (package.json "tap" "node-arg", docs/architecture.md#how-the-typescript-of-the-tests-runs).
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
