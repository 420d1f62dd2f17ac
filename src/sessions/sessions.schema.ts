import { z } from 'zod';
import { instant } from '../http/formats.js';
import { isIsoInstant } from '../config.js';
import { snapshotName } from '../emulator/snapshots.schema.js';
import { isHttpUrl } from '../lib/http-url.js';

// docs/sessions.md

const sessionLabel = z
  .string()
  .min(1, 'label accepts 1-128 printable characters')
  .max(128, 'label accepts 1-128 printable characters')
  .regex(/^[\x20-\x7e]+$/, 'label accepts 1-128 printable characters');

/** The longest scenario text a request may carry (the loader's own bound, docs/sessions.md#scenarios). */
const SCENARIO_TEXT_MAX = 1024 * 1024;

const CLOCK_RULE = '"realtime" or an ISO 8601 instant such as 2026-03-01T12:00:00.000Z, years 0000-9999 up to 9999-12-31T23:59:59.999Z (the session starts frozen there)';

export const createSessionBody = z
  .strictObject({
    fixtures: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('A fixtures object (the schema of a --fixtures file) for this session instead of the server\'s; see docs/configuration.md#fixtures-file-format'),
    snapshot: snapshotName.optional().describe('Start from this snapshot of the root sandbox (POST /_emulator/snapshots or PUT an exported file); reset goes back to it'),
    clock: z
      .string()
      .refine((value) => value === 'realtime' || isIsoInstant(value), { message: `clock accepts ${CLOCK_RULE}` })
      .optional()
      .describe(`${CLOCK_RULE}; default: the server's --clock`),
    webhookUrl: z
      .string()
      .refine(isHttpUrl, { message: 'webhookUrl accepts an http:// or https:// URL' })
      .nullable()
      .optional()
      .describe('Where this session sends its webhooks; default none (events are recorded SKIPPED)'),
    seed: z
      .string()
      .min(1, 'seed accepts 1-128 characters')
      .max(128, 'seed accepts 1-128 characters')
      .optional()
      .describe('Ids follow this seed: the same seed and requests give byte-identical answers, as a fresh server with --seed does. Default: a sequence of the session\'s own, shared with no other session'),
    label: sessionLabel.optional().describe('A name for a run\'s sessions: GET and DELETE /_emulator/sessions?label=... list and end them together'),
    scenario: z
      .union([
        z.string().min(1, 'scenario accepts a scenario name or a scenario file\'s text').max(SCENARIO_TEXT_MAX, 'scenario accepts at most 1 MiB of text'),
        z.record(z.string(), z.unknown()),
      ])
      .optional()
      .describe(
        'Start from a scenario (docs/sessions.md#scenarios): the name of a shipped one or one of --scenarios (GET /_emulator/scenarios), a scenario file\'s text ' +
          '(YAML or JSON), or the scenario as an object. Its seed, clock and fixtures apply (given here too, they must be equal), and its `given` is built before the answer',
      ),
  })
  .optional();

export const sessionListQuery = z.strictObject({
  label: sessionLabel.optional().meta({ examples: ['ci-run-42'] }).describe('Only the sessions created with this label'),
});

export const endSessionsQuery = z.strictObject({
  label: sessionLabel.meta({ examples: ['ci-run-42'] }).describe('End every session created with this label (required: ending every session of a shared server is never implied)'),
});

export const endedSessionsSchema = z
  .object({
    ended: z.array(z.string()).describe('The ids of the sessions ended, oldest first (empty when none had the label)'),
  })
  .meta({ id: 'EndedSessions' });

export const sessionParams = z.strictObject({
  id: z.string().min(1).max(64).describe('A session id (ses_...)'),
});

const credential = z.object({ apiKey: z.string(), secret: z.string() });

export const sessionSchema = z
  .object({
    id: z.string().describe('ses_ and 16 hexadecimal digits'),
    baseUrl: z.string().describe('Where the session answers: {baseUrl}/v1/... and {baseUrl}/_emulator/...; the HMAC canonical string covers the path as sent, prefix included'),
    createdAt: instant(),
    lastUsedAt: instant().describe('Real time of the last request to the session'),
    expiresAt: instant().describe('Real time the session ends if no request comes before (--session-idle-timeout after lastUsedAt)'),
    webhookUrl: z.string().nullable().describe('The webhook endpoint of the session\'s first programme'),
    startedFrom: z.object({
      fixtures: z.enum(['server', 'given']).describe('The server\'s fixtures or the ones given at creation'),
      snapshot: z.string().nullable(),
      clock: z.string().describe('"realtime" or the ISO instant the clock started frozen at'),
      seed: z.string().nullable().describe('The seed given at creation; null: ids from a sequence of the session\'s own'),
    }),
    label: z.string().nullable().describe('The label given at creation'),
    scenario: z
      .object({
        name: z.string(),
        source: z.enum(['shipped', 'folder', 'given']).describe('A shipped file, a file of --scenarios, or one sent with the request'),
        steps: z.number().int().describe('Its steps as played (GET {baseUrl}/_emulator/scenario)'),
        given: z.record(z.string(), z.string()).describe('What its `given` made: each name and its id'),
      })
      .nullable()
      .describe('The scenario the session started from; null when none'),
    credentials: z
      .object({
        programmeId: z.string(),
        single: credential.extend({ userId: z.string() }).nullable().describe('The first SINGLE_USER key of the first programme'),
        multi: credential.nullable().describe('The first MULTI_USER key of the first programme'),
        webhook: credential.describe('The key and secret that sign the session\'s webhooks'),
      })
      .describe('The first programme\'s keys, as in the fixtures'),
  })
  .meta({ id: 'Session' });

export const sessionListSchema = z.object({
  data: z.array(sessionSchema),
  limit: z.number().int().describe('--max-sessions: the most live sessions at once'),
  idleTimeoutSeconds: z.number().int().describe('--session-idle-timeout'),
});
