import { createHash } from 'node:crypto';
import { prepared } from '../../db/connection.js';
import { precisionOf, type AppContext } from '../../context.js';
import { errors, ServiceError } from '../../core/errors.js';
import { jsonBoundMessage, jsonBoundPassed } from '../../lib/json-bounds.js';
import { compactBase64, isPaddedBase64 } from '../../lib/base64.js';
import { parseOrThrow } from '../../http/validation-errors.js';
import { requireOwnAccount } from '../accounts/accounts.service.js';
import type { Caller } from '../../core/caller.js';
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
import { assertEnrollmentActive } from '../enrollment/enrollment.service.js';
import { createTransaction } from '../transactions/transactions.create.js';
import { railBehaviourFor } from '../transactions/transactions.rail.js';
import { accountInstrument } from '../transactions/transactions.schema.js';
import { parsePacs008 } from './pacs008.js';
import { payoutJsonPayload, type PayoutFormat, type PayoutOrder, type PayoutSubmissionResponse } from './payouts.schema.js';

// Payout submission (docs/payouts.md; interface 4.12, 2.15): a Base64 body holding a json payload or a pacs.008
// message becomes one WITHDRAWAL to a beneficiary, accepted with 202 and then run on the rail timeline.
// Not enough funds does not refuse the submission: the transaction is recorded FAILED with
// statusCode INSUFFICIENT_FUNDS, as the real service reports it asynchronously.

const IDEMPOTENCY_SCOPE = 'payout';
const MIN_BODY_CHARACTERS = 20; // interface 4.12: "a length bound of 20"; the emulator reads it as a minimum

export interface PayoutSubmission {
  format: PayoutFormat;
  idempotencyKey: string;
  /** The raw body text (Base64), or undefined when there was none. */
  body: string | undefined;
}

/** Base64 -> UTF-8 text; any failure is 400 InvalidFormat on `body` (docs/decisions.md#payout-body). */
function decodeBody(body: string | undefined): string {
  const compact = compactBase64(body ?? ''); // docs/payouts.md: wrapped `base64` output works as it is
  if (compact.length === 0) {
    const message = 'The body is required: the payout message as one Base64 string (Content-Type: text/plain)';
    throw errors.invalid(message, [{ type: 'MissingRequestBody', fieldRef: 'body', message }]);
  }
  if (compact.length < MIN_BODY_CHARACTERS) {
    throw errors.field('InvalidFormat', 'body', `The body must be at least ${MIN_BODY_CHARACTERS} Base64 characters; got ${compact.length}`);
  }
  if (!isPaddedBase64(compact)) {
    throw errors.field(
      'InvalidFormat',
      'body',
      'The body is not valid Base64: use the standard alphabet (A-Z a-z 0-9 + /) with = padding to a multiple of 4 characters; spaces, tabs and line breaks are ignored',
    );
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(compact, 'base64'));
  } catch {
    throw errors.field('InvalidFormat', 'body', 'The Base64 body does not decode to UTF-8 text');
  }
}

function parseJsonOrder(text: string): PayoutOrder {
  const bound = jsonBoundPassed(text); // docs/robustness.md#json-bounds
  if (bound) throw errors.field('InvalidFormat', 'body', jsonBoundMessage('The decoded payload', bound));
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
    debtor: { by: 'ID', value: input.entityId },
    creditor: { beneficiaryId: input.beneficiaryId },
    instrumentId: input.instrumentId ?? null,
    amount: input.amount,
    currency: input.currency,
    // the reference travels as remittance text and is kept as externalId for reconciliation
    debitMemo: input.reference,
    externalId: input.reference,
    purpose: input.purpose ?? null,
    requestedRails: [],
    refs: { debitAccountId: 'entityId', beneficiaryId: 'beneficiaryId', account: 'beneficiaryId', instrumentId: 'instrumentId', amount: 'amount', currency: 'currency' },
  };
}

/**
 * A lookup refusal that names the field or element it came from (docs/payouts.md#refusals): 404 with a
 * `NotFound` item, 403 with an `InvalidValue` item, the same shape as every other 404 with validation
 * details; the message keeps the path in front so it reads alone too.
 */
function refusalAt(status: 403 | 404, fieldRef: string, message: string): ServiceError {
  const text = `${fieldRef}: ${message}`;
  return status === 404
    ? errors.notFound(text, [{ type: 'NotFound', fieldRef, message: text }])
    : errors.forbidden(text, 'FORBIDDEN', [{ type: 'InvalidValue', fieldRef, message: text }]);
}

/** Re-label a lookup error with the field of the payload it came from. */
function naming<T>(fieldRef: string, lookup: () => T): T {
  try {
    return lookup();
  } catch (error) {
    if (error instanceof ServiceError && (error.statusCode === 403 || error.statusCode === 404)) {
      throw refusalAt(error.statusCode, fieldRef, error.message);
    }
    throw error;
  }
}

/** Accounts of the programme whose deposit instructions show this IBAN (or account number), the caller's first. */
function accountsShowing(ctx: AppContext, caller: Caller, keys: readonly string[], value: string): Array<{ id: string; user_id: string }> {
  return prepared<{ id: string; user_id: string }>(
    ctx.db,
    `SELECT DISTINCT a.id, a.user_id, a.user_id = ? AS own, a.created_at_ms
       FROM deposit_instructions d JOIN accounts a ON a.id = d.account_id, json_each(d.fields) f
      WHERE a.programme_id = ?
        AND json_extract(f.value, '$.key') IN (SELECT value FROM json_each(?))
        AND replace(upper(json_extract(f.value, '$.value')), ' ', '') = ?
      ORDER BY own DESC, a.created_at_ms, a.id`,
  ).all(caller.userId, caller.programmeId, JSON.stringify(keys), value.replace(/\s+/g, '').toUpperCase());
}

/**
 * The debit account (docs/payouts.md#debtor-account): an account id, or (pacs.008) an IBAN or account number shown
 * in one of the caller's own deposit instructions. Another user's account is 403, an unknown one 404.
 */
function resolveDebitAccount(ctx: AppContext, caller: Caller, order: PayoutOrder): AccountRow {
  const { debtor, refs } = order;
  if (debtor.by !== 'IBAN') {
    const exists = prepared<{ id: string }>(ctx.db, 'SELECT id FROM accounts WHERE id = ? AND programme_id = ?').get(debtor.value, caller.programmeId);
    if (exists || debtor.by === 'ID') return naming(refs.debitAccountId, () => requireOwnAccount(ctx, caller, debtor.value));
  }
  const keys = debtor.by === 'IBAN' ? ['iban'] : ['iban', 'accountNumber'];
  const [account] = accountsShowing(ctx, caller, keys, debtor.value);
  if (!account) {
    const what = debtor.by === 'IBAN' ? 'IBAN' : 'account id, account number or IBAN';
    throw refusalAt(404, refs.debitAccountId, `no account of ${caller.userId} has the ${what} ${debtor.value} (see the deposit instructions of GET /v1/accounts/{accountId})`);
  }
  if (account.user_id !== caller.userId) throw refusalAt(403, refs.debitAccountId, `${debtor.value} is an account of another user`);
  return naming(refs.debitAccountId, () => requireOwnAccount(ctx, caller, account.id));
}

function resolveCreditor(ctx: AppContext, caller: Caller, order: PayoutOrder): { beneficiary: BeneficiaryRow; instrument: BeneficiaryInstrumentRow } {
  const { creditor, refs } = order;
  const accountMatches = (instrument: BeneficiaryInstrumentRow) =>
    creditor.iban !== undefined ? instrument.iban === normalizeIban(creditor.iban) : instrument.account_number === creditor.accountNumber;
  const hasAccount = creditor.iban !== undefined || creditor.accountNumber !== undefined;

  if (creditor.beneficiaryId === undefined) {
    const found = findBankInstrument(ctx, caller, creditor);
    if (!found) throw refusalAt(404, refs.account, `no beneficiary of ${caller.userId} has a bank account ${creditor.iban ?? creditor.accountNumber}`);
    return found;
  }
  const beneficiary = naming(refs.beneficiaryId, () => requireOwnBeneficiary(ctx, caller, creditor.beneficiaryId!));
  if (order.instrumentId !== null) {
    return { beneficiary, instrument: naming(refs.instrumentId, () => requireInstrument(ctx, beneficiary, order.instrumentId!)) };
  }
  const instruments = instrumentsOf(ctx, beneficiary.id);
  if (hasAccount) {
    const instrument = instruments.find(accountMatches);
    if (!instrument) throw refusalAt(404, refs.account, `beneficiary ${beneficiary.id} has no bank account ${creditor.iban ?? creditor.accountNumber}`);
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
 * docs/payouts.md#rules. Runs inside the route's SQLite transaction: either the transaction and the Idempotency-Key
 * record are both written, or nothing is.
 */
export function submitPayout(ctx: AppContext, caller: Caller, submission: PayoutSubmission): PayoutSubmissionResponse {
  return ctx.db.transaction(() => submitPayoutNow(ctx, caller, submission)).immediate();
}

function submitPayoutNow(ctx: AppContext, caller: Caller, submission: PayoutSubmission): PayoutSubmissionResponse {
  const user = prepared<{ type: string }>(ctx.db, 'SELECT type FROM users WHERE id = ?').get(caller.userId);
  if (user?.type !== 'BUSINESS') {
    throw errors.forbidden(`Payout origination is for BUSINESS users; ${caller.userId} is a ${user?.type ?? 'unknown'} user`, 'INVALID_USER_TYPE');
  }
  assertEnrollmentActive(ctx, caller.userId); // activation gates money (docs/decisions.md#enrollment-gate)

  const requestHash = createHash('sha256').update(`${submission.format}\n${submission.body ?? ''}`).digest('hex');
  const previous = prepared<{ request_hash: string; response_body: string }>(
    ctx.db,
    'SELECT request_hash, response_body FROM idempotency_records WHERE scope = ? AND owner = ? AND key = ?',
  ).get(IDEMPOTENCY_SCOPE, idempotencyOwner(caller), submission.idempotencyKey);
  if (previous) {
    if (previous.request_hash === requestHash) return JSON.parse(previous.response_body) as PayoutSubmissionResponse;
    throw errors.conflict(`Idempotency-Key ${submission.idempotencyKey} was already used for a different payout; use a new key for a new payout`);
  }

  const text = decodeBody(submission.body);
  const order = submission.format === 'json' ? parseJsonOrder(text) : parsePacs008(text);

  const debit = resolveDebitAccount(ctx, caller, order);
  const { beneficiary, instrument } = resolveCreditor(ctx, caller, order);
  if (instrument.currency !== order.currency) {
    throw errors.field('InvalidValue', order.refs.currency, `${order.currency} does not match instrument ${instrument.id}, which is paid in ${instrument.currency}`);
  }
  const creditAmountMinor = parsePositiveAmount(ctx, order.amount, order.currency, order.refs.amount);
  // The rail the message asks for when the instrument allows it, else the instrument's default; the fee
  // follows the rail used (docs/payouts.md#rail).
  const allowed = railsFor(instrument);
  const rail = order.requestedRails.find((requested) => allowed.includes(requested)) ?? allowed[0]!;
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
      // Magic cents on the payout's amount as written, never on its converted debit (docs/decisions.md#magic-amounts).
      railBehaviour: railBehaviourFor(creditAmountMinor, precisionOf(ctx, order.currency)),
    },
    { failOnInsufficientFunds: true },
  );

  const response: PayoutSubmissionResponse = { messageId, transactionId: transaction.id, status: 'RECEIVED', receivedAt: ctx.clock.nowIso() };
  prepared(
    ctx.db,
    `INSERT INTO idempotency_records (scope, owner, key, request_hash, response_status, response_body, created_at) VALUES (?, ?, ?, ?, 202, ?, ?)`,
  ).run(IDEMPOTENCY_SCOPE, idempotencyOwner(caller), submission.idempotencyKey, requestHash, JSON.stringify(response), ctx.clock.nowIso());
  return response;
}
