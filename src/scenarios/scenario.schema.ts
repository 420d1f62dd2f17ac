import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../core/webhook-events.js';
import { targetProblem } from '../lib/request-target.js';
import { REFERENCE, wholeReference } from './scenario.refs.js';

// The scenario file format (docs/decisions.md#scenario-format): one zod schema validates a file and is the source of the
// published JSON Schema (schemas/scenario.schema.json, scripts/scenario-schema.mjs), so every `.describe()` here is
// what an editor shows beside the field. Objects are strict: an unknown field is an error at its line and column
// (src/scenarios/scenario.load.ts), never ignored.

/** A name later steps refer to: `${name}` (a given user, account, beneficiary, deposit instruction or capture). */
export const NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;
const nameField = (what: string) =>
  z
    .string()
    .regex(NAME_PATTERN, `${what} must start with a letter and hold only letters, digits and _ (at most 64), so that \${name.field} can name it`)
    .refine((value) => value !== 'steps' && value !== 'programme', { message: `${what} cannot be "steps" or "programme" (reserved words of references)` });

const decimal = z.string().regex(/^-?\d{1,30}(\.\d{1,18})?$/, 'must be a decimal string such as "10000.00"');
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/;

export const DURATION = /^(\d{1,12})(ms|s|m|h)?$/;
const duration = z
  .union([z.number().int().min(0).max(366 * 24 * 3600 * 1000), z.string().regex(DURATION, 'must be a duration such as 1500ms, 1s, 5m or 2h (or a number of milliseconds)')])
  .describe('How far to move the emulated clock: milliseconds as a number, or 1500ms, 1s, 5m, 2h');

const ENROLLMENTS = ['NOT_STARTED', 'DRAFT', 'PENDING_REVIEW', 'ACTIVE', 'REJECTED'] as const;

const givenAccount = z
  .strictObject({
    as: nameField('as').describe('The name later steps use for this account: ${usd.id}, ${usd.balances.available}'),
    currency: z
      .string()
      .regex(/^[A-Z][A-Z0-9_]{2,15}$/, 'currency must be a currency code such as USD or USDC')
      .describe('Which of the accounts the activation opened (the programme\'s account templates for the user\'s type): the one in this currency'),
    balance: decimal
      .refine((value) => !value.startsWith('-'), { message: 'balance must not be negative' })
      .optional()
      .describe('Fund the account to exactly this available balance with a simulated deposit that completes (POST /v1/sandbox/accounts/{id}/deposits); default: no deposit'),
  })
  .describe('An account the user\'s activation opened, named and optionally funded');

const givenBeneficiary = z
  .strictObject({
    as: nameField('as').describe('The name later steps use: ${initech.id}, ${initech.instruments.0.id}'),
    body: z.record(z.string(), z.unknown()).describe('The POST /v1/beneficiaries body, sent as the user'),
  })
  .describe('A beneficiary the user creates');

const givenDepositInstruction = z
  .strictObject({
    as: nameField('as').describe('The name later steps use: ${wire.id}'),
    account: z.string().describe('The `as` name of one of this user\'s accounts'),
    rail: z
      .string()
      .regex(/^[A-Z0-9_]{2,32}(\.[A-Z0-9_]{2,32}){1,2}$/, 'rail must be a rail such as US.USD.ACH or ETHEREUM.USDC')
      .describe('The rail of an instruction the account has (US.USD.ACH, US.USD.FEDWIRE, ETHEREUM.USDC ...): the first one of that rail is named'),
  })
  .describe('A deposit instruction of one of the user\'s accounts, named (the bank issues them when the account\'s provider is ready)');

const givenUser = z
  .strictObject({
    as: nameField('as').describe('The name later steps use: ${northwind.id}; `as: northwind` on a request signs as this user'),
    type: z.enum(['BUSINESS', 'PERSON']).describe('The user type of POST /v1/auth/users'),
    name: z.string().min(1).max(200).describe('The user\'s name (a business name or a person\'s legal name)'),
    email: z.string().max(254).optional().describe('The user\'s email address'),
    externalId: z.string().min(1).max(128).optional().describe('The user\'s externalId; default: the `as` name'),
    enrollment: z
      .enum(ENROLLMENTS)
      .optional()
      .describe(
        'How far onboarding gets through the API: NOT_STARTED (created only), DRAFT (enrollment read: its information request exists), ' +
          'PENDING_REVIEW (the request filled and submitted), ACTIVE (approved, accounts open, the bank ready), REJECTED (the review rejected it). Default ACTIVE',
      ),
    accounts: z.array(givenAccount).max(20).optional().describe('Only with ACTIVE: accounts the activation opened, named, funded by completed deposits'),
    beneficiaries: z.array(givenBeneficiary).max(50).optional().describe('Beneficiaries the user creates (any enrollment status the API allows)'),
    depositInstructions: z.array(givenDepositInstruction).max(20).optional().describe('Only with ACTIVE: deposit instructions of the named accounts, named'),
  })
  .describe('A user made through the API as a client would: created, then onboarded to `enrollment`');

const givenSchema = z
  .strictObject({
    users: z.array(givenUser).max(50).optional().describe('Users made in the sandbox\'s first programme with its MULTI_USER key, in order'),
  })
  .describe('State built through the API before the first step, as a client would build it');

const keyAs = z
  .strictObject({
    key: z.string().min(1).max(128).optional().describe('An API key of the sandbox (its fixtures); default: the first programme\'s MULTI_USER key'),
    user: z.string().min(1).max(200).optional().describe('The user acted for: a given user\'s name, a user id of the fixtures (usr_...) or a ${...} reference to one; omitted: no user (a programme-level call)'),
  })
  .describe('A particular key of the sandbox, and optionally the user acted for');

export const asSchema = z
  .union([z.string().min(1).max(64), keyAs])
  .describe('Who signs the request: a given user\'s name (the MULTI_USER key acting for that user), `programme` (the MULTI_USER key, no user), or { key, user }');

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The path of a `request` or `control` as written, each ${...} reference taken as one plain character, must be a
 * normalized target: dot segments or encoded dots and slashes would take the call out of the scenario's session
 * (docs/scenarios.md#paths). The engine checks the path again once references are filled in.
 */
function refuseUnnormalizedPath(path: string, context: z.core.$RefinementCtx<string>): void {
  if (wholeReference(path) !== null) return;
  const problem = targetProblem(path.replace(REFERENCE, 'x'));
  if (problem !== null) context.addIssue({ code: 'custom', message: `path is not normalized: ${problem}; a scenario's calls stay in its own session`, input: path });
}

export const SESSIONS_CLOSED = 'a scenario runs inside a session: /_emulator/sessions is not open to it';

/** Whether a control path names the server's sessions (docs/scenarios.md#paths): checked as written and as filled in. */
export function opensSessions(path: string): boolean {
  return /^\/_emulator\/sessions(\/|\?|$)/.test(path);
}

const requestAction = z
  .strictObject({
    method: z.enum(METHODS).describe('The HTTP method'),
    path: z
      .string()
      .max(2048)
      .regex(/^(\/v1\/|\$\{[^{}]*\}$)/, 'path must be a /v1/... path, or one ${...} reference to a link the sandbox gave (control-plane calls are the other actions, or `control`)')
      .superRefine(refuseUnnormalizedPath)
      .describe('The /v1 path and query string (${...} references are filled in), or one reference to an absolute link the sandbox gave (a statement file\'s url): its path and query are called'),
    as: asSchema.optional(),
    body: z.unknown().optional().describe('A JSON body'),
    raw: z.string().optional().describe('A text body sent as it is (text/plain for a payout, else as the content-type header says)'),
    base64: z
      .union([z.string(), z.record(z.string(), z.unknown())])
      .optional()
      .describe('A payout body: text (a pacs.008 XML) or an object (JSON) that the engine encodes as Base64 and sends as text/plain'),
    idempotencyKey: z.string().min(1).max(255).optional().describe('The Idempotency-Key header'),
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'a header name holds letters, digits and - only'), z.string().max(8192)).optional().describe('Extra headers'),
  })
  .describe('A /v1 call, signed like a client signs it (HMAC; the payout variant on /v1/payout-origination/)');

const reference = z.string().min(1).max(256);
/** docs/scenarios.md#the-control-plane-actions: a type the service sends, so a typo is an error when the file is read, not a wait that fails. */
const eventType = z.enum(WEBHOOK_EVENT_TYPES);

const forceAction = z
  .strictObject({
    transaction: reference.describe('The transaction id, usually a reference: ${payout.transactionId}'),
    status: z.string().regex(/^[A-Z_]{2,32}$/, 'status must be a transaction status such as FAILED').describe('The status to walk the transaction to (POST /_emulator/transactions/{id}/status)'),
    statusCode: z.string().max(64).optional().describe('The status code recorded (FAILED defaults to RAIL_REJECTED)'),
    statusReason: z.string().max(255).optional().describe('The status reason recorded'),
  })
  .describe('Force a transaction\'s status (POST /_emulator/transactions/{id}/status)');

const returnAction = z
  .strictObject({
    transaction: reference.describe('The completed outgoing transaction returned'),
    reasonCode: z.string().max(8).describe('A return reason code: R01 (ACH) or AC04 (ISO 20022)'),
    amount: decimal.optional().describe('Default: all that is still returnable'),
    statusReason: z.string().max(255).optional().describe('The status reason recorded'),
  })
  .describe('The bank returns a completed outgoing transaction (POST /_emulator/transactions/{id}/return)');

const decideAction = z
  .strictObject({
    informationRequest: reference.describe('The information request id'),
    decision: z.enum(['APPROVED', 'REJECTED']).describe('The review decision'),
  })
  .describe('Decide an information request under review (POST /_emulator/information-requests/{id}/decision)');

const controlAction = z
  .strictObject({
    method: z.enum(METHODS).describe('The HTTP method'),
    path: z
      .string()
      .max(2048)
      .regex(/^\/_emulator\//, 'path must be a /_emulator/... path')
      .refine((value) => !opensSessions(value), { message: SESSIONS_CLOSED })
      .superRefine(refuseUnnormalizedPath)
      .describe('The control-plane path; ${...} references are filled in'),
    body: z.unknown().optional().describe('A JSON body'),
  })
  .describe('Any other control-plane call');

const waitForAction = z
  .strictObject({
    events: z.array(eventType).min(1).max(50).describe('Webhook event types that must appear in the delivery log, in this order'),
    transaction: reference.optional().describe('Only events about this transaction'),
  })
  .describe('Settle until the delivery log holds these events in order (fails with what it saw)');

/** The actions a step may take; a step takes exactly one (or none, when it only checks with `expect`). */
export const ACTIONS = ['request', 'advance', 'settle', 'fault', 'chaos', 'force', 'return', 'decide', 'snapshot', 'control', 'waitFor'] as const;
export type ActionName = (typeof ACTIONS)[number];

const MATCHERS = ['equals', 'matches', 'gt', 'gte', 'lt', 'lte', 'exists', 'contains'] as const;
export type MatcherName = (typeof MATCHERS)[number];

const comparable = z.union([z.number(), decimal, reference]);
export const matcherSchema = z
  .union([
    z.strictObject({ equals: z.unknown().describe('Deep equality') }),
    z.strictObject({ matches: z.string().max(1024).describe('A regular expression the value (as text) matches') }),
    z.strictObject({ gt: comparable.describe('Greater than (numbers or decimal strings, compared exactly)') }),
    z.strictObject({ gte: comparable.describe('Greater than or equal') }),
    z.strictObject({ lt: comparable.describe('Less than') }),
    z.strictObject({ lte: comparable.describe('Less than or equal') }),
    z.strictObject({ exists: z.boolean().describe('Present (true) or absent (false)') }),
    z.strictObject({ contains: z.unknown().describe('A string holds this text, or an array holds an element equal to this') }),
  ])
  .describe('One matcher');

const expectValue = z.unknown().describe('A value (equality) or one matcher: { equals | matches | gt | gte | lt | lte | exists | contains }');

const balanceExpect = z
  .strictObject({
    account: z.string().min(1).max(256).describe('A given account\'s name, or a ${...} reference to an account id'),
    available: expectValue.optional(),
    current: expectValue.optional(),
  })
  .describe('The account\'s balances (GET /v1/accounts/{id} as its user)');

const webhooksExpect = z
  .strictObject({
    events: z.array(eventType).min(1).max(50).describe('Event types seen in the delivery log, in this order (others may come between)'),
    transaction: reference.optional().describe('Only events about this transaction'),
  })
  .describe('Webhook events recorded so far (GET /_emulator/webhooks/deliveries)');

const expectSchema = z
  .strictObject({
    status: z
      .union([z.number().int().min(100).max(599), z.array(z.number().int().min(100).max(599)).min(1).max(20)])
      .optional()
      .describe('The answer\'s status, or a list of accepted ones'),
    body: z.record(z.string().max(256), expectValue).optional().describe('Dotted paths into the answer\'s body (data.0.id, data.length), each a value or one matcher'),
    headers: z.record(z.string().max(64), expectValue).optional().describe('Answer headers (names in any case), each a value or one matcher'),
    text: expectValue.optional().describe('The whole answer body as text (a PDF, CSV or XML answer): a value or one matcher'),
    balance: balanceExpect.optional(),
    webhooks: webhooksExpect.optional(),
  })
  .describe('Checks after the action; the first that fails stops the run');

export const stepSchema = z
  .strictObject({
    id: z
      .string()
      .regex(/^[a-z][a-zA-Z0-9_-]{0,63}$/, 'id must start with a lower-case letter and hold letters, digits, _ and - (at most 64)')
      .optional()
      .describe('Later steps read its answer: ${steps.<id>.status}, ${steps.<id>.body.x}, ${steps.<id>.headers.x}, ${steps.<id>.transactionId}'),
    caption: z.string().max(500).optional().describe('One line a demo shows for the step'),
    note: z.string().max(5000).optional().describe('A longer text for the step'),
    request: requestAction.optional(),
    advance: duration.optional(),
    settle: z.literal(true).optional().describe('Run everything due now: jobs and webhook deliveries (POST /_emulator/settle)'),
    fault: z.record(z.string(), z.unknown()).optional().describe('Add a fault rule: the POST /_emulator/faults body'),
    chaos: z.union([z.literal('off'), z.record(z.string(), z.unknown())]).optional().describe('Webhook chaos: the PUT /_emulator/webhooks/chaos body, or off (DELETE)'),
    force: forceAction.optional(),
    return: returnAction.optional(),
    decide: decideAction.optional(),
    snapshot: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'snapshot must be a snapshot name: lower-case letters, digits, . _ - (at most 64)')
      .optional()
      .describe('Save a snapshot of the sandbox under this name (POST /_emulator/snapshots)'),
    control: controlAction.optional(),
    waitFor: waitForAction.optional(),
    capture: z
      .record(
        z.string().regex(NAME_PATTERN, 'a capture name must start with a letter and hold only letters, digits and _'),
        z.string().regex(/^(status|body|headers|transactionId)(\.[^.\s]+)*$/, 'a capture is status, body, body.<dotted path>, headers.<name> or transactionId'),
      )
      .optional()
      .describe('Names for parts of the answer, for later steps: { payout: body } gives ${payout.transactionId}; transactionId: the transaction the step made or moved'),
    expect: expectSchema.optional(),
  })
  .describe('One step: exactly one action (or only `expect`), then capture and expect');

export const scenarioSchema = z
  .strictObject({
    $schema: z.string().optional().describe('The JSON Schema of the file, for editors'),
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'name must be lower-case letters, digits and - (at most 64), starting with a letter or digit')
      .describe('The scenario\'s name'),
    description: z.string().max(5000).optional().describe('What the scenario shows'),
    seed: z.string().min(1).max(128).optional().describe('The session\'s seed: the same file and seed give the same ids and answers (quote numbers: seed: "42")'),
    clock: z
      .string()
      .refine((value) => value === 'realtime' || (INSTANT.test(value) && !Number.isNaN(Date.parse(value))), {
        message: 'clock must be "realtime" or an ISO 8601 instant such as 2026-03-01T12:00:00Z',
      })
      .optional()
      .describe('The session starts with its clock frozen at this instant ("realtime": flowing); default: the server\'s'),
    fixtures: z
      .union([z.string().min(1).max(1024), z.record(z.string(), z.unknown())])
      .optional()
      .describe('The session\'s fixtures: a path relative to the file, or an inline fixtures object; default: the server\'s'),
    webhooks: z
      .strictObject({
        receiver: z
          .literal(true)
          .describe('The runner starts a webhook receiver answering 204 (service-sandbox run: a listener on this machine; a session the server starts: one answered in process) and points the session\'s webhook endpoint at it, so deliveries are DELIVERED (and chaos duplicates happen)'),
      })
      .optional()
      .describe('Where the session\'s webhooks go; default: nowhere (every delivery is recorded SKIPPED)'),
    given: givenSchema.optional(),
    steps: z.array(stepSchema).min(1).max(500).describe('The story, in order'),
  })
  .describe('A scenario: a sandbox set up, a story told and checked');

export type Scenario = z.infer<typeof scenarioSchema>;
export type ScenarioStep = z.infer<typeof stepSchema>;
export type GivenUser = z.infer<typeof givenUser>;
export type RequestAction = z.infer<typeof requestAction>;
export type ExpectSpec = z.infer<typeof expectSchema>;

export { MATCHERS, ENROLLMENTS };
