// What every generated client's journey shares (docs/openapi.md#generators): the fixture credentials, the
// signing adapter's core (the project's own signRequest, both variants) and the journey itself, written once
// against `Steps`; each generator's file implements the steps with its generated client, with no casts.
// test/http/generators.test.ts generates each client, compiles it under strict tsc and runs it.
import { signRequest } from 'service-sandbox';

export const baseUrl = process.env.SANDBOX_URL ?? 'http://127.0.0.1:4010';
export const KEY = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', programId: 'prg_sandbox' };
const PAYOUT_PATH = '/v1/payout-origination/';

/**
 * The signing headers of one request (docs/authentication.md): `target` is the path and `?query` exactly as
 * sent, `body` the raw bytes. Under /v1/payout-origination/ the payout variant (docs/payouts.md): an RFC 3339
 * timestamp and `sha256=<hex>`.
 */
export function signedHeaders(method: string, target: string, body: string | Uint8Array = ''): Record<string, string> {
  const payout = target.startsWith(PAYOUT_PATH);
  const timestamp = payout ? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') : String(Date.now());
  const signature = signRequest({ apiKey: KEY.apiKey, secret: KEY.secret, timestamp, method, target, body });
  return {
    'X-Service-Api-Key': KEY.apiKey,
    'X-Service-Timestamp': timestamp,
    'X-Service-Program-Id': KEY.programId,
    'X-Service-Signature': payout ? `sha256=${signature}` : signature,
  };
}

/** The signing headers of a fetch Request (a fetch wrapper or an interceptor that sees one). */
export async function signFetchRequest(request: Request): Promise<Request> {
  const url = new URL(request.url);
  const body = request.body ? new Uint8Array(await request.clone().arrayBuffer()) : '';
  for (const [name, value] of Object.entries(signedHeaders(request.method, `${url.pathname}${url.search}`, body))) request.headers.set(name, value);
  return request;
}

/** A fetch that signs what it sends: the hook of the generators that take a fetch implementation. */
export const signedFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => fetch(await signFetchRequest(new Request(input, init)));

export type PayoutHeaders = {
  'Idempotency-Key': string;
  'X-Service-Timestamp': string;
  'X-Service-Signature': string;
  'X-Service-Program-Id': string;
};

/** The payout's declared headers, signed over the Base64 body it will send (docs/payouts.md). */
export function payoutHeaders(format: 'json' | 'pacs008', payload: string, idempotencyKey: string): PayoutHeaders {
  const signed = signedHeaders('POST', `${PAYOUT_PATH}${format}`, payload);
  return {
    'Idempotency-Key': idempotencyKey,
    'X-Service-Timestamp': signed['X-Service-Timestamp'] ?? '',
    'X-Service-Signature': signed['X-Service-Signature'] ?? '',
    'X-Service-Program-Id': KEY.programId,
  };
}

export interface Steps {
  /** GET /v1/transactions with numeric paging; the page size the answer reports and how many rows came. */
  listTransactions(pageIndex: number, pageSize: number): Promise<{ pageSize: number; rows: number }>;
  /** POST /v1/beneficiaries (a business with a US bank account); its id. */
  createBeneficiary(name: string): Promise<string>;
  /** POST /v1/transaction-intents (acct_acme_usd to acct_acme_eur); its id. */
  createIntent(idempotencyKey: string): Promise<string>;
  /** POST /v1/transaction-intents/{id}/commit; the status. */
  commitIntent(id: string, idempotencyKey: string): Promise<string>;
  /** POST /v1/payout-origination/json with the Base64 payload; the status and transaction id. */
  payout(payload: string, headers: PayoutHeaders): Promise<{ status: string; transactionId: string }>;
  /** GET /v1/accounts/acct_acme_usd/statement?format=pdf; the link's url. */
  statementLink(startDate: string, endDate: string): Promise<string>;
  /** GET /v1/statement-files/{fileId}?expires&signature; the bytes. */
  statementFile(fileId: string, expires: string, signature: string): Promise<Uint8Array>;
}

export function fail(message: string): never {
  throw new Error(message);
}

export async function journey(steps: Steps): Promise<void> {
  const run = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const page = await steps.listTransactions(0, 5);
  const beneficiary = await steps.createBeneficiary(`Initrode ${run}`);
  const intentKey = `gen-intent-${run}`;
  const intent = await steps.createIntent(intentKey);
  const committed = await steps.commitIntent(intent, intentKey);
  const payload = Buffer.from(
    JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: beneficiary, amount: '25.00', currency: 'USD', reference: `gen-${run}` }),
  ).toString('base64');
  const payout = await steps.payout(payload, payoutHeaders('json', payload, `gen-payout-${run}`));
  const today = new Date().toISOString().slice(0, 10);
  const start = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
  const link = new URL(await steps.statementLink(start < '2026-01-01' ? '2026-01-01' : start, today));
  const fileId = link.pathname.split('/').pop() ?? fail(`a link without a file: ${link.href}`);
  const pdf = await steps.statementFile(fileId, link.searchParams.get('expires') ?? '', link.searchParams.get('signature') ?? '');
  const seen = {
    page,
    beneficiary,
    intent: committed,
    payout,
    statement: { magic: Buffer.from(pdf.subarray(0, 5)).toString('latin1'), bytes: pdf.byteLength },
  };
  process.stdout.write(`${JSON.stringify(seen)}\n`);
}

export function main(steps: Steps): void {
  journey(steps).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
