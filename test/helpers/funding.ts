import { createHmac } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { prepared } from '../../src/db/connection.js';
import type { AppContext } from '../../src/context.js';
import { precisionOf } from '../../src/context.js';
import { createTransaction } from '../../src/domains/transactions/transactions.create.js';
import { getTransactionRow, precisionLookup } from '../../src/domains/transactions/transactions.stored.js';
import { toTransaction } from '../../src/domains/transactions/transactions.schema.js';
import { transitionTransaction } from '../../src/domains/transactions/transactions.transition.js';
import type { Transaction } from '../../src/domains/transactions/transactions.schema.js';
import { parseAmount } from '../../src/lib/money.js';
import { CREDENTIALS, json, type Identity, type TestApp } from '../helper.js';

// Test funding, the payout signer and small readers for the money-out tests (beneficiaries, intents,
// payouts). The fixture history (opening balances) belongs to another issue, so these tests fund accounts
// themselves (a completed INCOMING deposit through the transaction core) and compare balances as deltas.

interface AccountLookup {
  programme_id: string;
  user_id: string;
  currency: string;
}

/** Credit `amount` (a decimal string in the account currency) to an account, settled at once. */
export function fund(ctx: AppContext, accountId: string, amount: string): string {
  return ctx.db.transaction(() => {
    const account = prepared<AccountLookup>(ctx.db, 'SELECT programme_id, user_id, currency FROM accounts WHERE id = ?').get(accountId);
    if (!account) throw new Error(`fund: no account ${accountId}`);
    const minor = parseAmount(amount, precisionOf(ctx, account.currency));
    const row = createTransaction(ctx, {
      programmeId: account.programme_id,
      userId: account.user_id,
      accountId,
      debitAccountId: null,
      creditAccountId: accountId,
      direction: 'INCOMING',
      type: 'DEPOSIT',
      debitAmountMinor: minor,
      debitCurrency: account.currency,
      debitParty: { partyType: 'PAYER', payer: { displayName: 'Test funding' } },
      creditAmountMinor: minor,
      creditCurrency: account.currency,
    });
    transitionTransaction(ctx, row.id, 'COMPLETED');
    return row.id;
  })();
}

export function base64(text: string | Buffer): string {
  return Buffer.from(text).toString('base64');
}

export interface PayoutOptions {
  format?: string;
  /** Raw body text (already Base64); undefined sends no body. */
  body?: string;
  /** null leaves the header out. */
  idempotencyKey?: string | null;
  /** null leaves the header out. */
  contentType?: string | null;
  as?: Identity;
  /** RFC 3339 timestamp to sign with; default: the real wall clock now. */
  timestamp?: string;
  /** Replace or add headers after signing (null removes one). */
  headers?: Record<string, string | null>;
}

/**
 * Headers of the payout HMAC variant (docs/decisions.md#payout-hmac-variant): sha256=<hex> over apiKey + timestamp +
 * POST + path + body.
 */
export function signPayout(url: string, body: string, as: Identity = {}, timestamp = new Date().toISOString()): Record<string, string> {
  const apiKey = as.apiKey ?? CREDENTIALS.single.apiKey;
  const secret = as.secret ?? CREDENTIALS.single.secret;
  const signature = createHmac('sha256', secret).update(`${apiKey}${timestamp}POST${url}`).update(body).digest('hex');
  const headers: Record<string, string> = {
    'x-service-api-key': apiKey,
    'x-service-timestamp': timestamp,
    'x-service-program-id': as.programmeId ?? CREDENTIALS.programmeId,
    'x-service-signature': `sha256=${signature}`,
  };
  if (as.userId) headers['x-service-user-id'] = as.userId;
  return headers;
}

let keyCounter = 0;

/** POST /v1/payout-origination/{format}, signed with the payout variant; a fresh Idempotency-Key unless given. */
export async function postPayout(sandbox: TestApp, options: PayoutOptions = {}): Promise<LightMyRequestResponse> {
  const url = `/v1/payout-origination/${options.format ?? 'json'}`;
  const body = options.body ?? '';
  const headers: Record<string, string> = signPayout(url, body, options.as, options.timestamp);
  if (options.contentType !== null) headers['content-type'] = options.contentType ?? 'text/plain';
  if (options.idempotencyKey !== null) headers['idempotency-key'] = options.idempotencyKey ?? `payout-key-${(keyCounter += 1)}`;
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === null) delete headers[name];
    else headers[name] = value;
  }
  return sandbox.app.inject({ method: 'POST', url, payload: options.body, headers });
}

// ---- readers ----

export interface Balances {
  current: string;
  available: string;
}

export async function balances(sandbox: TestApp, accountId: string, as?: Identity): Promise<Balances> {
  const response = await sandbox.request('GET', `/v1/accounts/${accountId}`, undefined, as);
  if (response.statusCode !== 200) throw new Error(`balances(${accountId}): ${response.statusCode} ${response.body}`);
  return json(response).balances;
}

/** Minor units of a 2-decimal amount string, for exact delta arithmetic in tests. */
export function cents(amount: string): bigint {
  return parseAmount(amount.replace(/^-/, ''), 2) * (amount.startsWith('-') ? -1n : 1n);
}

export function transaction(sandbox: TestApp, id: string): Transaction {
  const row = getTransactionRow(sandbox.ctx, id);
  if (!row) throw new Error(`no transaction ${id}`);
  return toTransaction(row, precisionLookup(sandbox.ctx));
}

export function transactionsOfIntent(sandbox: TestApp, intentId: string): string[] {
  return prepared<{ id: string }>(sandbox.ctx.db, 'SELECT id FROM transactions WHERE intent_id = ?')
    .all(intentId)
    .map((row) => row.id);
}

export function countTransactions(sandbox: TestApp): number {
  return prepared<{ n: number }>(sandbox.ctx.db, 'SELECT COUNT(*) AS n FROM transactions').get()!.n;
}
