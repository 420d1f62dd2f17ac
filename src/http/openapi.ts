import type { AuthPolicy } from './auth.js';

// OpenAPI details the zod transform cannot know: the security schemes of interface 5 (docs/authentication.md),
// the security requirement of each route (from its `config.auth` policy), and readable descriptions of
// the error responses, which all share the ServiceError body of interface 7.1.

export const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'Access token from POST /v1/auth/token (interface 5.1). Lifetime 3600 s of emulated time; scopes as in docs/authentication.md.',
  },
  serviceApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Api-Key',
    description:
      'HMAC mode (interface 5.2). Send all four X-Service-* headers; X-Service-User-Id names the user for a MULTI_USER key on user-scoped endpoints and must be omitted with a SINGLE_USER key.',
  },
  serviceTimestamp: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Timestamp',
    description: 'Milliseconds since the Unix epoch, within 60 s of the real clock (payout endpoint: RFC 3339 UTC within 300 s).',
  },
  serviceProgramId: { type: 'apiKey', in: 'header', name: 'X-Service-Program-Id', description: 'The programme of the API key.' },
  serviceSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Signature',
    description:
      'Lower-case hex HMAC-SHA256, keyed with the API secret, of apiKey + timestamp + METHOD + path?query + raw body (docs/authentication.md). Payout endpoint: sha256=<hex>.',
  },
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'Control plane only, and only when the server runs with --admin-token / ADMIN_TOKEN (docs/control-plane.md).',
  },
} as const;

/** One tag per area, in the order readers meet them. */
export const TAGS: Array<{ name: string; description: string }> = [
  { name: 'Auth', description: 'Access tokens and programme users (interface 5.1; docs/authentication.md)' },
  { name: 'Users', description: 'Users of the programme (interface 4.11)' },
  { name: 'Enrollment', description: 'Enrollment of a user (interface 4.9, 4.10; docs/onboarding.md)' },
  { name: 'Information requests', description: 'Information requests and their entries (interface 4.7, 4.8; docs/onboarding.md)' },
  { name: 'Accounts', description: 'Accounts, balances and deposit instructions (interface 4.1, 4.2; docs/money-in.md)' },
  { name: 'Statements', description: 'Account statements as JSON, CSV or PDF (interface 4.3; docs/statements.md)' },
  { name: 'Sandbox', description: 'Simulated deposits (interface 4.13; docs/money-in.md)' },
  { name: 'Transactions', description: 'Transactions of a user or a programme (interface 4.5, 4.6)' },
  { name: 'Beneficiaries', description: 'Beneficiaries and their instruments (interface 4.14, 4.15; docs/money-out.md)' },
  { name: 'Transaction intents', description: 'Priced previews of a transfer, then committed (interface 4.4; docs/money-out.md)' },
  { name: 'Payouts', description: 'Payout submission as JSON or ISO 20022 pacs.008 (interface 4.12; docs/payouts.md)' },
  { name: 'Webhooks', description: 'The transaction webhook the emulator sends to your URL (interface 6.1; docs/webhooks.md)' },
  { name: 'Emulator', description: 'The /_emulator control plane: clock, reset, forced outcomes, dashboard (docs/control-plane.md)' },
  { name: 'Emulator: webhooks', description: 'Webhook endpoint, delivery log, replay, trigger, chaos and the receiver check (docs/webhooks.md, docs/faults.md)' },
  { name: 'Emulator: snapshots', description: 'Save, restore, export and upload the whole state (docs/control-plane.md#snapshots)' },
  { name: 'Emulator: sessions', description: 'Isolated sandboxes under /_sessions/{id} on the same port, one per test (docs/sessions.md)' },
  { name: 'Emulator: faults', description: 'Fault rules on API requests, webhook chaos and the receiver check (docs/faults.md)' },
];

const HMAC_REQUIREMENT = { serviceApiKey: [], serviceTimestamp: [], serviceProgramId: [], serviceSignature: [] };

/** The OpenAPI security requirement of a route; undefined leaves the operation without one. */
export function securityFor(policy: AuthPolicy | undefined, url: string): Array<Record<string, string[]>> | undefined {
  if (url.startsWith('/_emulator')) return [{}, { adminToken: [] }];
  if (!policy) return undefined;
  if (policy.modes.includes('none')) return [];
  const requirements: Array<Record<string, string[]>> = [];
  if (policy.modes.includes('hmac') || policy.modes.includes('payout')) requirements.push({ ...HMAC_REQUIREMENT });
  if (policy.modes.includes('bearer')) requirements.push({ bearer: policy.scope ? [policy.scope] : [] });
  return requirements;
}

const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted for asynchronous work',
  '204': 'No content',
  '400':
    'Invalid request. Described by validationErrors: no errorCode (interface 7.1). Otherwise errorCode INVALID_REQUEST (e.g. HMAC and bearer credentials together), a user-header code or a PDF code (docs/errors.md)',
  '401': 'Missing or invalid authentication (UNAUTHORIZED)',
  '403': 'Not permitted: FORBIDDEN, SINGLE_USER_KEY_NOT_ALLOWED or INVALID_USER_TYPE',
  '404': 'Not found (NOT_FOUND): unknown id or an id of another programme',
  '409': 'Conflict with the current state (docs/errors.md)',
  '413': 'Body larger than accepted',
  '415': 'Unsupported Content-Type',
};

const DEFAULT_ERROR = {
  description:
    'Any other failure (404 unknown route, 405 wrong method with an Allow header, 413 body over the size limit (1 MiB unless the route says otherwise), 415 unsupported Content-Type, 500 INTERNAL_ERROR, 507 INTERNAL_ERROR when the disk is full and nothing was written) has the same ServiceError body.',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ServiceError' } } },
};

type Operation = { responses?: Record<string, { description?: string; content?: Record<string, unknown> }> };

/**
 * Name each documented status and add the shared `default` error response to every operation. A route that
 * answers something other than JSON declares its media types with `produces` (the statement file download,
 * the dashboard page); @fastify/swagger gives them to every status, but errors are always the JSON
 * ServiceError body (docs/decisions.md#error-body-everywhere), so error statuses are put back to application/json.
 */
export function documentErrorResponses<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, Operation>> }).paths ?? {};
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        if (response.description === 'Default Response' && STATUS_TEXT[status]) response.description = STATUS_TEXT[status];
        if (!status.startsWith('2') && response.content && Object.keys(response.content).some((type) => type !== 'application/json')) {
          response.content = { 'application/json': response.content['application/json'] ?? Object.values(response.content)[0] };
        }
      }
      if (!operation.responses.default) operation.responses.default = structuredClone(DEFAULT_ERROR);
    }
  }
  return document;
}
