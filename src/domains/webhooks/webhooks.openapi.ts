import { dropNull, SCHEMA_REF, type DocumentPart, type Json } from '../../http/openapi-document.js';

// What the webhooks domain adds to the OpenAPI document (docs/openapi.md#what-each-area-adds): the transaction webhook
// it sends (interface 6.1), under the OAS 3.1 `webhooks` key, with its headers and body schemas. No route answers it,
// so the generator knows nothing of it.

const WEBHOOK_HEADERS = [
  ['X-Service-Resource-Type', 'Always transaction.', { type: 'string', enum: ['transaction'] }, 'transaction'],
  [
    'X-Service-Event-Type',
    'transaction_created when the transaction is first recorded; transaction_status_updated when its status is written.',
    { type: 'string', enum: ['transaction_created', 'transaction_status_updated'] },
    'transaction_created',
  ],
  [
    'X-Service-Api-Key',
    'The webhook API key (wk_sandbox by default), one for all webhook events, issued apart from the REST keys; it picks the webhook secret and proves nothing by itself.',
    { type: 'string' },
    'wk_sandbox',
  ],
  [
    'X-Service-Timestamp',
    'Signing time in milliseconds since the Unix epoch, from the real wall clock even when the emulated clock is frozen or advanced; every attempt is signed afresh. Reject timestamps far from your own clock.',
    { type: 'string', pattern: '^[0-9]+$' },
    '1772366400000',
  ],
  [
    'X-Service-Signature',
    'Lower-case hex HMAC-SHA256, keyed with the webhook secret (whsec_sandbox_secret by default), of api key + timestamp + POST + the path of the webhook URL (no query string) + the raw body byte for byte, with no separators. Recompute and reject on mismatch (verifyWebhookSignature in the package).',
    { type: 'string', pattern: '^[0-9a-f]{64}$' },
    '0'.repeat(64),
  ],
] as const;

const WEBHOOK_DESCRIPTION =
  'One signed POST per transaction event to the programme\'s webhook URL (interface 6.1; docs/webhooks.md). ' +
  'Acknowledgement: any 2xx within 10 s (--webhook-timeout-ms); anything else (another status, a redirect, a network ' +
  'error, no answer in time) is a failed attempt. Retries after 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h and 8 h ' +
  'of emulated time, each counted from the failed attempt: ten attempts in all, then the delivery is FAILED (replayable ' +
  'with POST /_emulator/webhooks/deliveries/{id}/replay). Delivery is at least once: deduplicate on metadata.eventId, ' +
  'stable across retries and replays. Events of one transaction arrive in the order they were written.';

/** The transaction webhook of interface 6.1 under the OAS 3.1 `webhooks` key, with its body schemas. */
function addWebhooks(document: Json): void {
  const schemas = document.components.schemas as Json;
  const transaction = schemas.Transaction as Json | undefined;
  if (!transaction) return;
  // the webhook's transaction omits the fields that have no value instead of sending null (interface 6.1)
  const webhookTransaction = structuredClone(transaction);
  for (const [name, property] of Object.entries((webhookTransaction.properties ?? {}) as Json)) {
    const withoutNull = dropNull(property);
    if (withoutNull === property) continue;
    webhookTransaction.properties[name] = withoutNull;
    webhookTransaction.required = (webhookTransaction.required as string[]).filter((field) => field !== name);
  }
  webhookTransaction.description = 'The transaction as GET /v1/transactions/{transactionId} returned it when the event happened, with the fields that had no value (null) omitted.';
  schemas.WebhookTransaction = webhookTransaction;
  schemas.WebhookMetadata = {
    type: 'object',
    description: 'Identifies the event, its programme and user.',
    properties: {
      eventId: { type: 'string', description: 'Stable across retries and replays: deduplicate on it' },
      eventType: { type: 'string', enum: ['transaction_created', 'transaction_status_updated'] },
      programId: { type: 'string' },
      userId: { type: 'string', description: 'The user whose transaction it is (omitted for none)' },
      occurredAt: { type: 'string', format: 'date-time', description: 'Emulated time of the event' },
    },
    required: ['eventId', 'eventType', 'programId', 'occurredAt'],
    additionalProperties: false,
  };
  schemas.TransactionWebhookEvent = {
    type: 'object',
    description: 'Body of the transaction webhook (interface 6.1).',
    properties: {
      transaction: { $ref: `${SCHEMA_REF}WebhookTransaction` },
      metadata: { $ref: `${SCHEMA_REF}WebhookMetadata` },
    },
    required: ['transaction', 'metadata'],
    additionalProperties: false,
  };
  document.webhooks = {
    transaction: {
      post: {
        operationId: 'transactionWebhook',
        tags: ['Webhooks'],
        summary: 'Transaction webhook: sent to your URL on every transaction event (interface 6.1)',
        description: WEBHOOK_DESCRIPTION,
        security: [],
        parameters: WEBHOOK_HEADERS.map(([name, description, schema, example]) => ({ name, in: 'header', required: true, description, schema, example })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `${SCHEMA_REF}TransactionWebhookEvent` } } },
        },
        responses: {
          '200': { description: 'Acknowledged: any 2xx status within 10 s will do (the body is ignored)' },
          default: { description: 'Any other status, or no answer within 10 s, is a failed attempt: retried on the schedule above' },
        },
      },
    },
  };
}

export const webhooksDocument: DocumentPart = { finish: addWebhooks };
