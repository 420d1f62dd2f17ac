import { z } from 'zod';
import { isHttpUrl } from '../lib/http-url.js';

// POST /_emulator/webhooks/check (docs/faults.md#receiver-check): the request and the report.

export const CHECK_TIMEOUT_MIN_MS = 100;
export const CHECK_TIMEOUT_MAX_MS = 30_000;
export const CHECK_TIMEOUT_DEFAULT_MS = 10_000;

const TIMEOUT_RULE = `timeoutMs must be an integer number of milliseconds ${CHECK_TIMEOUT_MIN_MS}-${CHECK_TIMEOUT_MAX_MS}`;

export const receiverCheckBody = z
  .strictObject({
    url: z
      .string({ error: 'url must be an http:// or https:// URL' })
      .refine(isHttpUrl, { message: 'url must be an http:// or https:// URL' })
      .optional()
      .describe("Where to send the deliveries; absent: the programme's configured webhook URL"),
    programId: z
      .string({ error: 'programId must be a programme id such as prg_sandbox' })
      .min(1, 'programId must be a programme id such as prg_sandbox')
      .optional()
      .describe('Programme whose webhook key, secret and URL are used; absent: the first programme of the fixtures (prg_sandbox by default)'),
    timeoutMs: z
      .number({ error: TIMEOUT_RULE })
      .int(TIMEOUT_RULE)
      .min(CHECK_TIMEOUT_MIN_MS, TIMEOUT_RULE)
      .max(CHECK_TIMEOUT_MAX_MS, TIMEOUT_RULE)
      .optional()
      .describe(`How long each delivery waits for an answer (default ${CHECK_TIMEOUT_DEFAULT_MS}, the acknowledgement limit of interface 6.1)`),
  })
  .optional();
export type ReceiverCheckInput = NonNullable<z.infer<typeof receiverCheckBody>>;

export const receiverCheckQuery = z
  .strictObject({
    format: z
      .enum(['json', 'text'], { error: 'format accepts json or text' })
      .optional()
      .describe('json (the default): the report as JSON; text: its plain-text summary alone, as text/plain'),
  })
  .describe('The one rule for the answer\'s form: ?format=text gives text/plain, anything else JSON (the Accept header is not read)');

export const CASE_NAMES = [
  'valid',
  'bad-signature',
  'tampered-body',
  'stale-timestamp',
  'future-timestamp',
  'unknown-api-key',
  'duplicate',
  'query-string',
] as const;
export type CaseName = (typeof CASE_NAMES)[number];

export const EXPECTATIONS = ['ACKNOWLEDGED', 'REFUSED'] as const;
export type Expectation = (typeof EXPECTATIONS)[number];

export const receiverCheckCaseSchema = z
  .object({
    number: z.number().int().describe('1-8: the order the deliveries were sent in'),
    name: z.enum(CASE_NAMES),
    title: z.string().describe('What the delivery is, in a few words'),
    expected: z.enum(EXPECTATIONS).describe('ACKNOWLEDGED: a 2xx within timeoutMs; REFUSED: a non-2xx status within timeoutMs'),
    sent: z
      .object({
        url: z.string(),
        eventId: z.string(),
        apiKey: z.string().describe('X-Service-Api-Key as sent'),
        timestamp: z.string().describe('X-Service-Timestamp as sent'),
      })
      .describe('What this delivery carried that differs between cases'),
    got: z
      .object({
        status: z.number().int().nullable().describe('HTTP status of the answer; null on a network error or timeout'),
        error: z.string().nullable().describe('The network error or timeout; null when a status came back'),
        latencyMs: z.number().int().describe('From sending to the answer\'s status line (or to the failure)'),
        body: z.string().nullable().describe('The first 256 bytes of the answer\'s body, as UTF-8'),
      })
      .describe('What came back'),
    passed: z.boolean(),
    reason: z.string().describe('One line: why the case passed or failed, and what to change when it failed'),
  })
  .meta({ id: 'ReceiverCheckCase' });
export type ReceiverCheckCase = z.infer<typeof receiverCheckCaseSchema>;

export const receiverCheckReportSchema = z
  .object({
    url: z.string().describe('The URL checked (case query-string adds a parameter to it)'),
    programId: z.string().describe('The programme whose webhook key and secret signed the deliveries'),
    timeoutMs: z.number().int(),
    passed: z.boolean().describe('true when every case passed'),
    passedCount: z.number().int(),
    failedCount: z.number().int(),
    durationMs: z.number().int().describe('Real time the whole check took'),
    cases: z.array(receiverCheckCaseSchema),
    summary: z.string().describe('The same report as plain text, one screen (what ?format=text answers)'),
  })
  .meta({ id: 'ReceiverCheckReport' });
export type ReceiverCheckReport = z.infer<typeof receiverCheckReportSchema>;
