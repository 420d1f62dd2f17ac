import { z } from 'zod';
import { instant } from '../http/formats.js';

// Listing the scenarios a server knows and playing one in a sandbox (docs/sessions.md#scenarios,
// docs/sessions.md#playing-a-scenario).

const position = z.object({
  message: z.string(),
  line: z.number().int().nullable(),
  column: z.number().int().nullable(),
});

export const scenarioEntrySchema = z
  .object({
    name: z.string().describe('The file\'s `name` (a broken file: its file name without the extension)'),
    description: z.string().nullable(),
    steps: z.number().int().nullable().describe('How many steps a play of it shows: a step with a caption and the steps without one that follow it count as one (the demo: 17); null for a broken file'),
    source: z.enum(['shipped', 'folder']).describe('shipped with the server, or from the folder of --scenarios'),
    file: z.string().describe('The file\'s name in its folder'),
    error: position.nullable().describe('Why the file cannot be used, at its line and column; null for a good file'),
  })
  .meta({ id: 'ScenarioEntry' });

export const scenarioListSchema = z
  .object({
    data: z.array(scenarioEntrySchema).describe('The shipped files, then those of --scenarios, each folder by file name'),
    folder: z.string().nullable().describe('The folder of --scenarios, as given; null when none'),
  })
  .meta({ id: 'ScenarioList' });

export const playStepParams = z.object({
  number: z.coerce
    .number({ error: 'number must be a step number, an integer from 1' })
    .int('number must be a step number, an integer from 1')
    .min(1, 'number must be a step number, an integer from 1')
    .max(1000, 'number must be a step number, an integer from 1'),
});

export const engineStepSchema = z.object({
  index: z.number().int().describe('0-based index of the step in the file'),
  id: z.string().nullable(),
  action: z.string().nullable().describe('request, advance, settle, ... or null for a step that only checks'),
  passed: z.boolean(),
  request: z.object({ method: z.string(), path: z.string() }).nullable().describe('The call the step made, if any'),
  status: z.number().int().nullable().describe('The answer\'s status, if any'),
  failure: position.nullable(),
});
export type EngineStepView = z.infer<typeof engineStepSchema>;

export const playedStepSchema = z
  .object({
    number: z.number().int().describe('1-based: a step with a caption and the steps without one that follow it'),
    caption: z.string().nullable(),
    note: z.string().nullable(),
    done: z.boolean(),
    passed: z.boolean().nullable().describe('Every check of the step passed; null until it ran'),
    summary: z.string().nullable().describe('What the step did, once done'),
    transactionId: z.string().nullable().describe('The transaction the step made or moved, once done'),
    results: z.array(engineStepSchema).describe('The file\'s steps this played step ran, once done'),
  })
  .meta({ id: 'PlayedStep' });
export type PlayedStepView = z.infer<typeof playedStepSchema>;

export const playStateSchema = z
  .object({
    name: z.string(),
    description: z.string().nullable(),
    source: z.enum(['shipped', 'folder', 'given']).describe('A shipped file, a file of --scenarios, or one sent with the session'),
    steps: z.array(playedStepSchema),
    completed: z.number().int().describe('How many steps have run'),
    next: z.number().int().nullable().describe('The number of the step to play next; null once finished'),
    finished: z.boolean().describe('Every step ran, or one failed'),
    failed: position.extend({ step: z.number().int() }).nullable().describe('The step whose check failed (the play ends there), at its line and column'),
    running: z.boolean().describe('A step is running now'),
    given: z.record(z.string(), z.string()).describe('What the scenario\'s `given` made: each name and its id'),
    startedAt: instant().describe('The emulated instant the scenario started at: the start of its window on the balance chart'),
    userId: z.string().nullable().describe('The first user the scenario made (given or by a step), once made'),
    accountId: z.string().nullable().describe('The account of the latest step\'s transaction, else the user\'s first account'),
  })
  .meta({ id: 'ScenarioPlay' });
export type PlayState = z.infer<typeof playStateSchema>;

export const playStepResultSchema = z
  .object({
    step: playedStepSchema,
    scenario: playStateSchema,
  })
  .meta({ id: 'ScenarioPlayStep' });
export type PlayStepResult = z.infer<typeof playStepResultSchema>;
