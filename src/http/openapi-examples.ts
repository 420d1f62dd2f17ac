import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../config.js';

// Examples of the OpenAPI document (docs/openapi.md#examples): real answers of the default fixtures, captured
// by scripts/openapi-examples.ts (`npm run openapi`) from a fresh app and committed as openapi/examples.json.
// The runtime only reads that file (the capture builds the whole app, which http plumbing must not import:
// docs/architecture.md#layers). test/http/openapi-examples.test.ts captures them again and fails when the file
// differs, so the examples cannot drift from what the server answers.

export interface Example {
  summary: string;
  value: unknown;
}

/**
 * Per operationId: request body examples, response examples per status, and the user its success examples were
 * taken as when a MULTI_USER key named another user than the SINGLE_USER key's usr_acme.
 */
export interface ExamplesFile {
  [operationId: string]: { request?: Record<string, Example>; responses: Record<string, Record<string, Example>>; user?: string };
}

/** Found from the package root, in a checkout, next to dist/ and in the Docker image (which copies openapi/). */
export const EXAMPLES_FILE = path.join(PROJECT_ROOT, 'openapi', 'examples.json');

/** The stored examples; none when the file is missing (a copy of the package without openapi/). */
export function loadExamples(): ExamplesFile {
  if (!existsSync(EXAMPLES_FILE)) return {};
  return JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as ExamplesFile;
}
