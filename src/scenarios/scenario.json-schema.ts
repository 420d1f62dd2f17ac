import { z } from 'zod';
import { scenarioSchema } from './scenario.schema.js';

// The published JSON Schema of scenario files (schemas/scenario.schema.json, docs/decisions.md#scenario-format), made
// from the zod schema that validates them, so the two cannot disagree: scripts/scenario-schema.mjs writes it and
// test/scenarios/scenario-schema.test.ts fails when the committed copy is stale. What JSON Schema cannot say (one
// action per step, references, names) the loader checks (src/scenarios/scenario.load.ts).

export function scenarioJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(scenarioSchema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    $id: 'https://service-sandbox.dev/schemas/scenario.schema.json',
    title: 'service-sandbox scenario',
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$schema')),
  };
}

/** The committed file's text: two-space JSON and a final newline. */
export function scenarioJsonSchemaText(): string {
  return `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`;
}
