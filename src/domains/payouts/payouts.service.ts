import { createHash } from 'node:crypto';
import { sql } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { errors, parseOrThrow, ServiceError } from '../../http/errors.js';
import { requireOwnAccount, type Caller } from '../accounts/accounts.service.js';
import type { AccountRow } from '../accounts/accounts.schema.js';
import {
  creditInstrumentFor,
  creditPartyFor,
  creditRailTypeFor,
  feeRailFor,
  findBankInstrument,
  instrumentsOf,
  railsFor,
  requireInstrument,
  requireOwnBeneficiary,
} from '../beneficiaries/beneficiaries.service.js';
import type { BeneficiaryInstrumentRow, BeneficiaryRow } from '../beneficiaries/beneficiaries.schema.js';
import { normalizeIban } from '../beneficiaries/bank-validation.js';
import { parsePositiveAmount, quote } from '../fees-fx/fees-fx.service.js';
import { accountInstrument } from '../intents/intents.service.js';
import { assertEnrollmentActive } from '../enrollment/enrollment.service.js';
import { createTransaction } from '../transactions/transactions.service.js';
import { parsePacs008 } from './pacs008.js';
import { payoutJsonPayload, type PayoutFormat, type PayoutOrder, type PayoutSubmissionResponse } from './payouts.schema.js';

// Payout submission (interface 4.12, 2.15; contract 6): a Base64 body holding a json payload or a pacs.008
// message becomes one WITHDRAWAL to a beneficiary, accepted with 202 and then run on the rail timeline.
// Not enough funds does not refuse the submission: the transaction is recorded FAILED with
// statusCode INSUFFICIENT_FUNDS, as the real service reports it asynchronously.

const IDEMPOTENCY_SCOPE = 'payout';
const MIN_BODY_CHARACTERS = 20; // interface 4.12: "a length bound of 20"; the emulator reads it as a minimum
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export interface PayoutSubmission {
  format: PayoutFormat;
  idempotencyKey: string;
  /** The raw body text (Base64), or undefined when there was none. */
  body: string | undefined;
}

/** Base64 -> UTF-8 text; any failure is 400 InvalidFormat on `body` (contract 6). */
function decodeBody(body: string | undefined): string {
  const compact = (body ?? '').replace(/\s+/g, '');
  if (compact.length === 0) {
    const message = 'The body is required: the payout message as one Base64 string (Content-Type: text/plain)';
    throw errors.invalid(message, [{ type: 'MissingRequestBody', fieldRef: 'body', message }]);
  }
  if (compact.length < MIN_BODY_CHARACTERS) {
    throw errors.field('InvalidFormat', 'body', `The body must be at least ${MIN_BODY_CHARACTERS} Base64 characters; got ${compact.length}`);
  }
  if (!BASE64.test(compact) || compact.length % 4 !== 0) {
    throw errors.field(
      'InvalidFormat',
      'body',
      'The body is not valid Base64: use the standard alphabet (A-Z a-z 0-9 + /) with = padding to a multiple of 4 characters; line breaks are ignored',
    );
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(compact, 'base64'));
  } catch {
    throw errors.field('InvalidFormat', 'body', 'The Base64 body does not decode to UTF-8 text');
  }
}

function parseJsonOrder(text: string): PayoutOrder {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    throw errors.field('InvalidFormat', 'body', `The decoded payload is not JSON: ${(error as Error).message}`);
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw errors.field('InvalidFormat', 'body', 'The decoded payload must be a JSON object with entityId, beneficiaryId, amount, currency and reference');
  }
  const input = parseOrThrow(payoutJsonPayload, payload);
  return {
    messageId: input.messageId ?? null,
    debitAccountId: input.entityId,
    creditor: { beneficiaryId: input.beneficiaryId },
    instrumentId: input.instrumentId ?? null,
    amount: input.amount,
    currency: input.currency,
    // the reference travels as remittance text and is kept as externalId for reconciliation
    debitMemo: input.reference,
    externalId: input.reference,
    purpose: input.purpose ?? null,
    refs: { debitAccountId: 'entityId', beneficiaryId: 'beneficiaryId', account: 'beneficiaryId', instrumentId: 'instrumentId', amount: 'amount', currency: 'currency' },
  };
}

/** Re-label a lookup error with the field of the payload it came from. */
function naming<T>(fieldRef: string, lookup: () => T): T {
  try {
    return lookup();
  } catch (error) {
    if (error instanceof ServiceError && (error.statusCode === 403 || error.statusCode === 404)) {
      throw new ServiceError(error.statusCode, error.errorCode, `${fieldRef}: ${error.message}`);
    }
    throw error;
  }
}

function resolveCreditor(ctx: AppContext, caller: Caller, order: PayoutOrder): { beneficiary: BeneficiaryRow; instrument: BeneficiaryInstrumentRow } {
  const { creditor, refs } = order;
  const accountMatches = (instrument: BeneficiaryInstrumentRow) =>
    creditor.iban !== undefined ? instrument.iban === normalizeIban(creditor.iban) : instrument.account_number === creditor.accountNumber;
  const hasAccount = creditor.iban !== undefined || creditor.accountNumber !== undefined;

  if (creditor.beneficiaryId === undefined) {
    const found = findBankInstrument(ctx, caller, creditor);
    if (!found) throw errors.notFound(`${refs.account}: no beneficiary of ${caller.userId} has a bank account ${creditor.iban ?? creditor.accountNumber}`);
    return found;
  }
  const beneficiary = naming(refs.beneficiaryId, () => requireOwnBeneficiary(ctx, caller, creditor.beneficiaryId!));
  if (order.instrumentId !== null) {
    return { beneficiary, instrument: naming(refs.instrumentId, () => requireInstrument(ctx, beneficiary, order.instrumentId!)) };
  }
  const instruments = instrumentsOf(ctx, beneficiary.id);
  if (hasAccount) {
    const instrument = instruments.find(accountMatches);
    if (!instrument) throw errors.notFound(`${refs.account}: beneficiary ${beneficiary.id} has no bank account ${creditor.iban ?? creditor.accountNumber}`);
    return { beneficiary, instrument };
  }
  const instrument = instruments.find((candidate) => candidate.currency === order.currency);
  if (!instrument) {
    throw errors.field(
      'InvalidValue',
      refs.currency,
      `Beneficiary ${beneficiary.id} has no instrument in ${order.currency}; its instruments are in ${[...new Set(instruments.map((i) => i.currency))].join(', ')}`,
    );
  }
  return { beneficiary, instrument };
}

function idempotencyOwner(caller: Caller): string {
  return `${caller.programmeId}/${caller.userId}`;
}

/**
 * Contract 6. Runs inside the route's SQLite transaction: either the transaction and the Idempotency-Key
 * record are both written, or nothing is.
 */
export function submitPayout(ctx: AppContext, caller: Caller, submission: PayoutSubmission): PayoutSubmissionResponse {
  const user = sql<{ type: string }>(ctx.db, 'SELECT type FROM users WHERE id = ?').get(caller.userId);
  if (user?.type !== 'BUSINESS') {
    throw errors.forbidden(`Payout origination is for BUSINESS users; ${caller.userId} is a ${user?.type ?? 'unknown'} user`, 'INVALID_USER_TYPE');
  }
  assertEnrollmentActive(ctx, caller.userId); // issue 7: activation gates money

  const requestHash = createHash('sha256').update(`${submission.format}\n${submission.body ?? ''}`).digest('hex');
  const previous = sql<{ request_hash: string; response_body: string }>(
    ctx.db,
    'SELECT request_hash, response_body FROM idempotency_records WHERE scope = ? AND owner = ? AND key = ?',
  ).get(IDEMPOTENCY_SCOPE, idempotencyOwner(caller), submission.idempotencyKey);
  if (previous) {
    if (previous.request_hash === requestHash) return JSON.parse(previous.response_body) as PayoutSubmissionResponse;
    throw errors.conflict(`Idempotency-Key ${submission.idempotencyKey} was already used for a different payout; use a new key for a new payout`);
  }

  const text = decodeBody(submission.body);
  const order = submission.format === 'json' ? parseJsonOrder(text) : parsePacs008(text);

  const debit: AccountRow = naming(order.refs.debitAccountId, () => requireOwnAccount(ctx, caller, order.debitAccountId));
  const { beneficiary, instrument } = resolveCreditor(ctx, caller, order);
  if (instrument.currency !== order.currency) {
    throw errors.field('InvalidValue', order.refs.currency, `${order.currency} does not match instrument ${instrument.id}, which is paid in ${instrument.currency}`);
  }
  const creditAmountMinor = parsePositiveAmount(ctx, order.amount, order.currency, order.refs.amount);
  const rail = railsFor(instrument)[0]!;
  const priced = quote(ctx, {
    debitCurrency: debit.currency,
    creditCurrency: instrument.currency,
    feeRail: feeRailFor(instrument, rail),
    amount: { side: 'CREDIT', minor: creditAmountMinor },
    fieldRefs: { amount: order.refs.amount, currency: order.refs.currency },
  });

  const messageId = order.messageId ?? ctx.ids.id('payoutMessage');
  const transaction = createTransaction(
    ctx,
    {
      programmeId: caller.programmeId,
      userId: caller.userId,
      accountId: debit.id,
      debitAccountId: debit.id,
      creditAccountId: null,
      direction: 'OUTGOING',
      type: 'WITHDRAWAL',
      debitAmountMinor: priced.debitAmountMinor,
      netDebitAmountMinor: priced.principalMinor,
      debitCurrency: debit.currency,
      debitInstrument: accountInstrument(debit),
      debitMemo: order.debitMemo,
      creditAmountMinor: priced.creditAmountMinor,
      creditCurrency: instrument.currency,
      creditParty: creditPartyFor(beneficiary),
      creditRail: creditRailTypeFor(instrument, rail),
      creditInstrument: creditInstrumentFor(instrument),
      fees: priced.fees,
      exchangeRate: priced.exchangeRate,
      baseExchangeRate: priced.baseExchangeRate,
      fxSpread: priced.fxSpread,
      purpose: order.purpose,
      externalId: order.externalId,
    },
    { failOnInsufficientFunds: true },
  );

  const response: PayoutSubmissionResponse = { messageId, transactionId: transaction.id, status: 'RECEIVED', receivedAt: ctx.clock.nowIso() };
  sql(
    ctx.db,
    `INSERT INTO idempotency_records (scope, owner, key, request_hash, response_status, response_body, created_at) VALUES (?, ?, ?, ?, 202, ?, ?)`,
  ).run(IDEMPOTENCY_SCOPE, idempotencyOwner(caller), submission.idempotencyKey, requestHash, JSON.stringify(response), ctx.clock.nowIso());
  return response;
}
