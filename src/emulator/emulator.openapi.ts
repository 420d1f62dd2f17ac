import type { DocumentPart, Json } from '../http/openapi-document.js';

// What the control plane adds to the OpenAPI document (docs/openapi.md#what-each-area-adds): what its parameters mean,
// the snapshot upload's body, and the clock's offset, the one integer of its answers that may be negative.

/** The same meaning on two operations. */
const onBoth = (keys: string[], note: { description: string; example?: string | number }) => Object.fromEntries(keys.map((key) => [key, note]));

/** The Retry-After of a 429 (docs/errors.md#retry-after). */
function retryAfter(description: string): Json {
  return { 'Retry-After': { description, schema: { type: 'integer', minimum: 1, example: 1 } } };
}

export const emulatorDocument: DocumentPart = {
  parameters: {
    number: { description: 'The number of a step of the guided demo (GET /_emulator/demo)', example: 1 },
    ...onBoth(['GET /_emulator/webhooks/deliveries/{id} id', 'POST /_emulator/webhooks/deliveries/{id}/replay id'], {
      description: 'The id of a webhook delivery',
      example: 'dlv_0123456789abcdef',
    }),
    name: { description: 'The name of a snapshot', example: 'before-checkout' },
    'GET /_emulator/requests method': { description: 'Only requests with this HTTP method' },
    'GET /_emulator/requests pathPrefix': { description: 'Only requests whose path starts with this' },
    'GET /_emulator/requests status': { description: 'Only requests answered with this HTTP status' },
    'GET /_emulator/webhooks/deliveries status': { description: 'Only deliveries in this status' },
    'GET /_emulator/webhooks/deliveries eventType': { description: 'Only deliveries of this event type' },
    'GET /_emulator/webhooks/deliveries transactionId': { description: 'Only deliveries of this transaction\'s events' },
    'GET /_emulator/webhooks/deliveries programId': { description: 'Only deliveries of this programme' },
    'GET /_emulator/webhooks/endpoint programId': { description: 'Only this programme\'s endpoint (default: every programme)' },
    'GET /_emulator/jobs status': { description: 'Only jobs in this status' },
    limit: { description: 'At most this many items' },
    ...onBoth(['GET /_emulator/transactions accountId', 'GET /_emulator/ui/state accountId'], { description: 'Only transactions of this account' }),
    programmeId: { description: 'Only transactions of this programme' },
    ...onBoth(['GET /_emulator/transactions userId', 'GET /_emulator/ui/state userId'], { description: 'Only transactions of this user' }),
  },
  operations: {
    // The upload's body is a file, not JSON: the route reads it raw, so zod has no schema to declare it from
    // (docs/control-plane.md#snapshots).
    'PUT /_emulator/snapshots/{name}': (operation: Json) => {
      const file = { schema: { type: 'string', contentMediaType: 'application/vnd.sqlite3' } };
      operation.requestBody = {
        required: true,
        description: 'The snapshot file, as GET /_emulator/snapshots/{name}/export answered it (a SQLite database file)',
        content: { 'application/octet-stream': file, 'application/vnd.sqlite3': structuredClone(file), 'application/x-sqlite3': structuredClone(file) },
      };
    },
  },
  // docs/errors.md#retry-after: every 429 of the control plane says when to send again
  responseHeaders: {
    'PUT /_emulator/snapshots/{name}': { '429': retryAfter('Seconds to wait before sending the file again (1: a check ends within seconds)') },
    'GET /_emulator/ui/events': { '429': retryAfter('Seconds to wait before opening a stream again (1; a stream must close first)') },
    'GET /_emulator/requests': { '429': retryAfter('Seconds to wait before reading the journal again (1: the read in progress ends within seconds)') },
  },
  // the clock's answer: emulated minus real time
  signedIntegers: ['offsetMs'],
};
