import { signWebhook } from '../webhook-verify.js';
import { toWebhookTransaction, type Transaction } from '../domains/transactions/transactions.schema.js';
import { VERSION } from '../version.js';
import type { CaseName, Expectation } from './receiver-check.schema.js';

// The receiver check's cases (docs/faults.md#receiver-check), as data: each is the valid delivery with at most one
// thing changed. A delivery is built exactly as the real sender builds one (webhooks.attempt.ts prepareAttempt:
// the same headers, the same body shape of interface 6.1, signed with signWebhook over the URL's path without its
// query string), so what the receiver sees differs from a real delivery only where a case says so.

const HOUR_MS = 60 * 60 * 1000;

/** An X-Service-Api-Key no programme has (case unknown-api-key). */
export const UNKNOWN_API_KEY = 'wk_unknown_receiver_check';
/** Signs case bad-signature: a well-formed signature (64 lowercase hex) that is not the programme's. */
const WRONG_SECRET = 'whsec_not_the_programme_secret';
/** Added to the URL by case query-string: the signature does not cover the query (docs/webhooks.md#what-a-delivery-looks-like). */
export const CHECK_QUERY = 'receiver-check=query-string';

export interface CheckCaseDefinition {
  name: CaseName;
  title: string;
  expected: Expectation;
  /** Which event the delivery carries: the same number is the same eventId and body (the duplicate). */
  event: number;
  /** X-Service-Timestamp this far from the real clock (ms); 1 h is twelve times the 5-minute tolerance. */
  timestampOffsetMs?: number;
  signWithSecret?: 'wrong';
  apiKey?: 'unknown';
  /** The signature is over the valid body, then one field of the body sent is changed. */
  tamper?: boolean;
  query?: boolean;
  /** What a failure means and what to change, one line (the report's reason). */
  whenFailed: string;
}

export const CHECK_CASES: readonly CheckCaseDefinition[] = [
  {
    name: 'valid',
    title: 'a valid delivery',
    expected: 'ACKNOWLEDGED',
    event: 1,
    whenFailed: 'a correctly signed delivery must get a 2xx in time, or it is retried for hours and ends FAILED',
  },
  {
    name: 'bad-signature',
    title: 'a bad signature',
    expected: 'REFUSED',
    event: 2,
    signWithSecret: 'wrong',
    whenFailed: 'verify X-Service-Signature with your webhook secret and answer 401 when it differs',
  },
  {
    name: 'tampered-body',
    title: 'a tampered body',
    expected: 'REFUSED',
    event: 3,
    tamper: true,
    whenFailed: 'verify the signature over the raw body bytes, before parsing the JSON',
  },
  {
    name: 'stale-timestamp',
    title: 'a stale timestamp (1 h old)',
    expected: 'REFUSED',
    event: 4,
    timestampOffsetMs: -HOUR_MS,
    whenFailed: 'refuse an X-Service-Timestamp more than 5 minutes old (a replayed capture)',
  },
  {
    name: 'future-timestamp',
    title: 'a future timestamp (1 h ahead)',
    expected: 'REFUSED',
    event: 5,
    timestampOffsetMs: HOUR_MS,
    whenFailed: 'refuse an X-Service-Timestamp more than 5 minutes ahead: compare |now - timestamp|',
  },
  {
    name: 'unknown-api-key',
    title: 'an unknown X-Service-Api-Key',
    expected: 'REFUSED',
    event: 6,
    apiKey: 'unknown',
    whenFailed: 'refuse an X-Service-Api-Key other than your webhook key (the key picks the secret)',
  },
  {
    name: 'duplicate',
    title: 'the valid delivery again (same eventId)',
    expected: 'ACKNOWLEDGED',
    event: 1,
    whenFailed: 'delivery is at least once: dedupe on metadata.eventId and answer 2xx to a repeat',
  },
  {
    name: 'query-string',
    title: 'a query string the signature does not cover',
    expected: 'ACKNOWLEDGED',
    event: 8,
    query: true,
    whenFailed: 'verify over the URL path without its query string (verifyWebhookSignature drops it)',
  },
];

/** Who the deliveries are from and where they go. */
export interface CheckTarget {
  url: string;
  programmeId: string;
  apiKey: string;
  secret: string;
  /** metadata.occurredAt and the transaction's times (the emulated clock, as the sender's are). */
  occurredAt: string;
  /** Tells this run's ids apart from another run's (8 lowercase base32 characters). */
  runTag: string;
  /** The real wall clock, epoch ms: X-Service-Timestamp is real time (docs/webhooks.md#what-a-delivery-looks-like). */
  realNowMs: () => number;
}

export interface Delivery {
  url: string;
  headers: Record<string, string>;
  body: string;
  eventId: string;
  apiKey: string;
  timestamp: string;
}

/** Event and transaction ids that say what they are: `evt_check_<run>_<n>`, `txn_check_<run>_<n>`. */
export function checkIds(runTag: string, event: number): { eventId: string; transactionId: string } {
  return { eventId: `evt_check_${runTag}_${event}`, transactionId: `txn_check_${runTag}_${event}` };
}

/** A pending USD deposit as the sender's webhook form carries it (toWebhookTransaction: valueless fields left out). */
function checkTransaction(id: string, occurredAt: string): Record<string, unknown> {
  const transaction: Transaction = {
    id,
    type: 'DEPOSIT',
    status: 'PENDING',
    referenceNumber: 'RECEIVERCHECK',
    createdAt: occurredAt,
    updatedAt: occurredAt,
    statusReason: null,
    statusCode: null,
    category: null,
    externalId: null,
    depositReconciliationId: null,
    relatedTransactionId: null,
    debitAmount: '100.00',
    debitCurrency: 'USD',
    debitParty: { partyType: 'PAYER', payer: { displayName: 'service-sandbox receiver check' } },
    debitRail: 'US.USD.ACH',
    debitReference: 'RECEIVER-CHECK',
    debitInstrument: null,
    creditAmount: '100.00',
    creditCurrency: 'USD',
    creditParty: null,
    creditRail: null,
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_receiver_check', displayName: 'Receiver check (USD)', currency: 'USD' } },
    fees: [],
    exchangeRate: '1',
    baseExchangeRate: '1',
    fxSpread: '0',
    tags: [],
    purpose: null,
  };
  return toWebhookTransaction(transaction);
}

/** The body of interface 6.1 in the sender's key order (webhooks.attempt.ts webhookBody). */
function checkBody(target: CheckTarget, event: number, tamper: boolean): string {
  const { eventId, transactionId } = checkIds(target.runTag, event);
  const transaction = checkTransaction(transactionId, target.occurredAt);
  if (tamper) transaction.creditAmount = '100000.00';
  const metadata = { eventId, eventType: 'transaction_created', programId: target.programmeId, userId: 'usr_receiver_check', occurredAt: target.occurredAt };
  return JSON.stringify({ transaction, metadata });
}

function withCheckQuery(url: string): string {
  const parsed = new URL(url);
  parsed.search = parsed.search ? `${parsed.search}&${CHECK_QUERY}` : `?${CHECK_QUERY}`;
  return parsed.toString();
}

/** The signed request of one case, built when it is sent (the timestamp is the real clock at that moment). */
export function buildDelivery(target: CheckTarget, definition: CheckCaseDefinition): Delivery {
  const body = checkBody(target, definition.event, false);
  const apiKey = definition.apiKey === 'unknown' ? UNKNOWN_API_KEY : target.apiKey;
  const secret = definition.signWithSecret === 'wrong' ? WRONG_SECRET : target.secret;
  const timestamp = String(target.realNowMs() + (definition.timestampOffsetMs ?? 0));
  // the signature's path is the URL's path, never its query (docs/decisions.md#webhook-signature-path)
  const path = new URL(target.url).pathname;
  const signature = signWebhook({ apiKey, secret, timestamp, path, rawBody: body });
  return {
    url: definition.query ? withCheckQuery(target.url) : target.url,
    headers: {
      'content-type': 'application/json',
      'user-agent': `service-sandbox-webhooks/${VERSION} (receiver check)`,
      'x-service-resource-type': 'transaction',
      'x-service-event-type': 'transaction_created',
      'x-service-api-key': apiKey,
      'x-service-timestamp': timestamp,
      'x-service-signature': signature,
    },
    body: definition.tamper ? checkBody(target, definition.event, true) : body,
    eventId: checkIds(target.runTag, definition.event).eventId,
    apiKey,
    timestamp,
  };
}
