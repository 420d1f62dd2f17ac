import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { advance, AS_JANE, buildTestApp, CREDENTIALS, json, type Identity, type TestApp } from '../helper.js';
import { postPayout, base64 } from '../helpers/funding.js';
import { documentValue, makePdf } from '../helpers/pdf.js';
import { MULTI, createUser, personEntries, startEnrollment, submit, writeEntries } from '../helpers/onboarding.js';
import { ERROR_CODES, VALIDATION_ERROR_TYPES } from '../../src/core/errors.js';
import { PAYMENT_PURPOSES, TRANSACTION_CATEGORIES, TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../../src/domains/transactions/transactions.machine.js';
import { INTENT_STATUSES } from '../../src/domains/intents/intents.machine.js';
import { CREDIT_RAILS } from '../../src/domains/fees-fx/fees-fx.schema.js';
import { INFORMATION_REQUEST_STATUSES } from '../../src/domains/information-requests/information-requests.machine.js';

// Every enum value of the interface is produced by a named flow over HTTP (docs/control-plane.md and
// docs/decisions.md#every-enum-value). The lists below are copied from the interface document (sections
// 2.2-2.11, 7.1, 7.2), not from the source, and the source's own lists are checked against them. Each flow
// runs over HTTP and records the values it READ BACK from a response; the table names, for every value, the
// flow that must have produced it. A value no flow produces fails the test with its name.

const INTERFACE = {
  'intent.type': ['TRANSFER', 'DEPOSIT', 'WITHDRAWAL', 'REFUND', 'PARTIAL_REFUND'],
  'intent.status': ['CREATED', 'EXPIRED', 'CANCELED', 'COMMITTED', 'FAILED'],
  'intent.creditRail': ['WIRE', 'ACH', 'RTP', 'SEPA', 'SEPA_INSTANT', 'SWIFT', 'EXTERNAL_WALLET', 'ETHEREUM', 'BASE', 'POLYGON', null],
  'transaction.type': ['TRANSFER', 'DEPOSIT', 'WITHDRAWAL', 'REFUND', 'PARTIAL_REFUND'],
  'transaction.status': ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'],
  'transaction.category': ['AUTOSWEEP', 'CASH_IN', 'P2P', 'MERCHANT', 'MANUAL', 'AUTOPAY', 'DIRECT_DEBIT', 'INTERNAL_SWEEP', 'REWARD', 'YIELD_FUNDING', 'YIELD_PAYOUT', null],
  'transaction.purpose': [
    'PAYMENT_FOR_SERVICES', 'PAYMENT_FOR_SOFTWARE', 'PAYMENT_FOR_IMPORTED_GOODS', 'TRAVEL_SERVICES', 'VENDOR_CONTRACTOR_PAYOUTS',
    'TRANSFER_TO_OWN_ACCOUNT', 'INVESTMENT_IN_SHARES', 'PURCHASE_OF_PROPERTY', 'REPAYMENT_OF_LOANS', 'SALARY', 'PAYMENT_OF_PROPERTY_RENTAL',
    'INFORMATION_SERVICE_CHARGES', 'ADVERTISING_AND_PUBLIC_RELATIONS_EXPENSES', 'ROYALTY_TRADEMARK_PATENT_AND_COPYRIGHT_FEES',
    'BROKER_FRONTEND_GUARANTEE_AND_CUSTODIAN_FEES', 'ADVISOR_TECHNICAL_AND_ACADEMIC_FEES', 'REPRESENTATIVE_OFFICE_EXPENSES', 'TAX_PAYMENT',
    'TRANSPORTATION_FEES_FOR_GOODS', 'CONSTRUCTION_COSTS', 'INSURANCE_PREMIUM', 'GENERAL_GOODS_TRADES_OFFLINE', 'INSURANCE_CLAIMS_PAYMENT',
    'FAMILY_MAINTENANCE', 'EDUCATION_RELATED_EXPENSES', 'MEDICAL_TREATMENT', 'DONATIONS', 'MUTUAL_FUND_INVESTMENT', 'CURRENCY_EXCHANGE',
    'USER_WITHDRAWAL', 'ADVANCE_PAYMENTS_FOR_GOODS', 'VENDOR_CONTRACTOR_PAYOUTS_SOFTWARE_DEVELOPMENT', 'MERCHANT_SETTLEMENT',
    'REPATRIATION_FUND_SETTLEMENT', 'PERSONAL_REMITTANCE', 'RETURN_OF_FUNDS', null,
  ],
  'party.partyType': ['PAYER', 'BENEFICIARY'],
  'instrument.instrumentType': ['ACCOUNT', 'BANK_ACCOUNT', 'VIRTUAL_ACCOUNT', 'EXTERNAL_WALLET'],
  'fee.type': ['PROCESSING'],
  'informationRequest.status': ['DRAFT', 'PROCESSING_SUBMISSION', 'PENDING_REVIEW', 'COMPLETED', 'CANCELED'],
  'informationRequest.subjectType': ['ENROLLMENT'],
  'informationRequest.validationStatus': ['MISSING', 'VALID', 'INVALID'],
  'informationRequest.decision': ['PENDING', 'APPROVED', 'REJECTED', null],
  'enrollment.status': ['INACTIVE', 'ACTIVE'],
  'enrollment.reason': ['REVOKED', 'ACTIVATION_REJECTED', null],
  'user.type': ['PERSON', 'BUSINESS'],
  'user.enrollmentStatus': ['ACTIVE', 'INACTIVE'],
  'error.errorCode': [
    'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'INVALID_REQUEST', 'INTERNAL_ERROR', 'INFORMATION_REQUEST_NOT_EDITABLE', 'INVALID_USER_TYPE',
    'SINGLE_USER_KEY_NOT_ALLOWED', 'USER_ID_HEADER_REQUIRED', 'USER_ID_HEADER_NOT_ALLOWED', 'PDF_PAGE_LIMIT_EXCEEDED', 'PDF_PASSWORD_PROTECTED',
    'PDF_UNREADABLE',
  ],
  'validationError.type': [
    'InvalidFormat', 'InvalidValue', 'MissingPathParameter', 'MissingQueryParameter', 'MissingRequestBody', 'MissingValue', 'NotFound',
    'UnexpectedVerificationError', 'Unknown', 'UnprocessableValue',
  ],
  'statementEntry.statusAsOfPeriodEnd': ['SETTLED', 'IN_FLIGHT'],
  'depositInstruction.status': ['ACTIVE', 'PENDING'],
} as const satisfies Record<string, ReadonlyArray<string | null>>;

type EnumName = keyof typeof INTERFACE;
type Value = string | null;

// value -> the flow that produces it. The intent flows of docs/money-out.md#intent-flows: P2P
// transfers, refunds of a deposit, direct debits from the user's own bank account.
const P2P_FLOW = 'P2P transfer intent';
const REFUND_FLOW = 'refund intents of a deposit';
const DIRECT_DEBIT_FLOW = 'direct debit intent';
const TABLE: { [E in EnumName]: Record<string, string> } = {
  'intent.type': {
    TRANSFER: 'own-account transfer intent',
    WITHDRAWAL: 'payout intent to a beneficiary',
    DEPOSIT: DIRECT_DEBIT_FLOW,
    REFUND: REFUND_FLOW,
    PARTIAL_REFUND: REFUND_FLOW,
  },
  'intent.status': {
    CREATED: 'payout intent to a beneficiary',
    COMMITTED: 'own-account transfer intent',
    CANCELED: 'intent cancel',
    EXPIRED: 'intent expiry on the emulated clock',
    FAILED: 'intent commit without funds',
  },
  'intent.creditRail': {
    ACH: 'intents pinned to each rail',
    RTP: 'intents pinned to each rail',
    WIRE: 'intents pinned to each rail',
    SWIFT: 'intents pinned to each rail',
    SEPA: 'intents pinned to each rail',
    SEPA_INSTANT: 'intents pinned to each rail',
    ETHEREUM: 'intents pinned to each rail',
    EXTERNAL_WALLET: 'intents pinned to each rail',
    BASE: 'intents pinned to each rail',
    POLYGON: 'intents pinned to each rail',
    null: 'own-account transfer intent',
  },
  'transaction.type': {
    TRANSFER: 'own-account transfer intent',
    DEPOSIT: 'sandbox deposit',
    WITHDRAWAL: 'payout intent to a beneficiary',
    REFUND: 'return of a completed payout',
    PARTIAL_REFUND: 'return of a completed payout',
  },
  'transaction.status': {
    PENDING: 'sandbox deposit',
    PROCESSING: 'payout intent to a beneficiary',
    COMPLETED: 'payout intent to a beneficiary',
    FAILED: 'magic .91 payout',
  },
  'transaction.category': {
    INTERNAL_SWEEP: 'stablecoin deposit and sweep',
    null: 'sandbox deposit',
    AUTOSWEEP: 'control-plane injection of each category',
    CASH_IN: 'control-plane injection of each category',
    MERCHANT: 'control-plane injection of each category',
    MANUAL: 'control-plane injection of each category',
    AUTOPAY: 'control-plane injection of each category',
    REWARD: 'control-plane injection of each category',
    YIELD_FUNDING: 'control-plane injection of each category',
    YIELD_PAYOUT: 'control-plane injection of each category',
    P2P: P2P_FLOW,
    DIRECT_DEBIT: DIRECT_DEBIT_FLOW,
  },
  'transaction.purpose': {
    ...Object.fromEntries(INTERFACE['transaction.purpose'].filter((v) => v !== null).map((v) => [v, 'control-plane injection of each purpose'])),
    PAYMENT_FOR_SERVICES: 'payout intent to a beneficiary',
    RETURN_OF_FUNDS: 'return of a completed payout',
    null: 'sandbox deposit',
  },
  'party.partyType': { PAYER: 'sandbox deposit', BENEFICIARY: 'payout intent to a beneficiary' },
  'instrument.instrumentType': {
    ACCOUNT: 'sandbox deposit',
    BANK_ACCOUNT: 'payout intent to a beneficiary',
    EXTERNAL_WALLET: 'intents pinned to each rail',
    VIRTUAL_ACCOUNT: 'injected deposit through a deposit instruction',
  },
  'fee.type': { PROCESSING: 'payout intent to a beneficiary' },
  'informationRequest.status': {
    DRAFT: 'onboarding a new user',
    PROCESSING_SUBMISSION: 'onboarding a new user',
    PENDING_REVIEW: 'onboarding a new user',
    COMPLETED: 'onboarding a new user',
    CANCELED: 'information request cancel',
  },
  'informationRequest.subjectType': { ENROLLMENT: 'onboarding a new user' },
  'informationRequest.validationStatus': { MISSING: 'onboarding a new user', INVALID: 'onboarding a new user', VALID: 'onboarding a new user' },
  'informationRequest.decision': {
    null: 'onboarding a new user',
    PENDING: 'onboarding a new user',
    APPROVED: 'onboarding a new user',
    REJECTED: 'rejected onboarding',
  },
  'enrollment.status': { INACTIVE: 'onboarding a new user', ACTIVE: 'onboarding a new user' },
  'enrollment.reason': { null: 'onboarding a new user', ACTIVATION_REJECTED: 'rejected onboarding', REVOKED: 'enrollment revoke' },
  'user.type': { PERSON: 'users list', BUSINESS: 'users list' },
  'user.enrollmentStatus': { ACTIVE: 'users list', INACTIVE: 'rejected onboarding' },
  'error.errorCode': {
    UNAUTHORIZED: 'error walk',
    FORBIDDEN: 'error walk',
    NOT_FOUND: 'error walk',
    INVALID_REQUEST: 'error walk',
    INTERNAL_ERROR: 'database fault',
    INFORMATION_REQUEST_NOT_EDITABLE: 'information request cancel',
    INVALID_USER_TYPE: 'error walk',
    SINGLE_USER_KEY_NOT_ALLOWED: 'error walk',
    USER_ID_HEADER_REQUIRED: 'error walk',
    USER_ID_HEADER_NOT_ALLOWED: 'error walk',
    PDF_PAGE_LIMIT_EXCEEDED: 'document checks',
    PDF_PASSWORD_PROTECTED: 'document checks',
    PDF_UNREADABLE: 'document checks',
  },
  'validationError.type': {
    InvalidFormat: 'error walk',
    InvalidValue: 'error walk',
    MissingPathParameter: 'error walk',
    MissingQueryParameter: 'error walk',
    MissingRequestBody: 'error walk',
    MissingValue: 'error walk',
    NotFound: 'error walk',
    UnexpectedVerificationError: 'error walk',
    Unknown: 'error walk',
    UnprocessableValue: 'document checks',
  },
  'statementEntry.statusAsOfPeriodEnd': { SETTLED: 'statement of today', IN_FLIGHT: 'statement of today' },
  'depositInstruction.status': { PENDING: 'deposit instruction provisioning', ACTIVE: 'deposit instruction provisioning' },
};

const key = (value: Value) => (value === null ? 'null' : value);

/** What each flow read back: enum -> value -> the flows that produced it. */
const observed = new Map<EnumName, Map<string, Set<string>>>();
function see(flow: string, name: EnumName, value: unknown): void {
  if (value !== null && typeof value !== 'string') throw new Error(`${flow}: ${name} read back as ${JSON.stringify(value)}`);
  let values = observed.get(name);
  if (!values) observed.set(name, (values = new Map()));
  let flows = values.get(key(value));
  if (!flows) values.set(key(value), (flows = new Set()));
  flows.add(flow);
}

function ok(response: LightMyRequestResponse, status: number, what: string): any {
  if (response.statusCode !== status) throw new Error(`${what}: expected ${status}, got ${response.statusCode} ${response.body}`);
  return json(response);
}

/** Read every enum a transaction carries. */
function seeTransaction(flow: string, transaction: any): void {
  see(flow, 'transaction.type', transaction.type);
  see(flow, 'transaction.status', transaction.status);
  see(flow, 'transaction.category', transaction.category);
  see(flow, 'transaction.purpose', transaction.purpose);
  for (const party of [transaction.debitParty, transaction.creditParty]) if (party) see(flow, 'party.partyType', party.partyType);
  for (const instrument of [transaction.debitInstrument, transaction.creditInstrument]) if (instrument) see(flow, 'instrument.instrumentType', instrument.instrumentType);
  for (const fee of transaction.fees) see(flow, 'fee.type', fee.type);
}

function seeIntent(flow: string, intent: any): void {
  see(flow, 'intent.type', intent.type);
  see(flow, 'intent.status', intent.status);
  see(flow, 'intent.creditRail', intent.creditRail);
  for (const instrument of [intent.debitInstrument, intent.creditInstrument]) if (instrument) see(flow, 'instrument.instrumentType', instrument.instrumentType);
  for (const fee of intent.fees) see(flow, 'fee.type', fee.type);
}

function seeRequest(flow: string, request: any): void {
  see(flow, 'informationRequest.status', request.status);
  see(flow, 'informationRequest.validationStatus', request.validationStatus);
  see(flow, 'informationRequest.decision', request.decision);
  if (request.subjectType) see(flow, 'informationRequest.subjectType', request.subjectType);
}

function seeEnrollment(flow: string, enrollment: any): void {
  see(flow, 'enrollment.status', enrollment.status);
  see(flow, 'enrollment.reason', enrollment.reason);
  seeRequest(flow, enrollment.informationRequest);
}

function seeError(flow: string, response: LightMyRequestResponse): void {
  const body = json(response);
  if (body.errorCode) see(flow, 'error.errorCode', body.errorCode);
  for (const item of body.validationErrors ?? []) see(flow, 'validationError.type', item.type);
}

const getTransaction = async (sandbox: TestApp, id: string, as?: Identity) => ok(await sandbox.request('GET', `/v1/transactions/${id}`, undefined, as), 200, `GET ${id}`);

let keys = 0;
const creationKeys = new Map<string, string>();
async function createIntent(sandbox: TestApp, body: Record<string, unknown>, as?: Identity): Promise<any> {
  const idempotencyKey = `enum-${(keys += 1)}`;
  const intent = ok(await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey, ...body }, as), 201, 'intent');
  creationKeys.set(intent.id, idempotencyKey);
  return intent;
}
async function commit(sandbox: TestApp, intent: any, as?: Identity): Promise<any> {
  const idempotencyKey = creationKeys.get(intent.id);
  return ok(await sandbox.request('POST', `/v1/transaction-intents/${intent.id}/commit`, { idempotencyKey }, as), 200, 'commit');
}

// ---- the named flows ----

type Flow = (sandbox: TestApp) => Promise<void>;
const FLOWS: Record<string, Flow> = {
  async 'sandbox deposit'(sandbox) {
    const flow = 'sandbox deposit';
    ok(await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { amount: '125.00', depositInstructionId: 'di_acme_usd_ach' }), 202, flow);
    const [latest] = ok(await sandbox.request('GET', '/v1/transactions?accountId=acct_acme_usd&pageSize=1'), 200, flow).data;
    seeTransaction(flow, latest);
    await advance(sandbox, 1_000);
    seeTransaction(flow, await getTransaction(sandbox, latest.id));
  },

  async 'stablecoin deposit and sweep'(sandbox) {
    const flow = 'stablecoin deposit and sweep';
    ok(await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usdc/deposits', { amount: '10.000000', depositInstructionId: 'di_acme_usdc_eth' }), 202, flow);
    await advance(sandbox, 2_000);
    for (const transaction of ok(await sandbox.request('GET', '/v1/transactions?accountId=acct_acme_usdc&pageSize=2'), 200, flow).data) seeTransaction(flow, transaction);
  },

  async 'own-account transfer intent'(sandbox) {
    const flow = 'own-account transfer intent';
    const intent = await createIntent(sandbox, { debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, creditAmount: '20.00' });
    const committed = await commit(sandbox, intent);
    seeIntent(flow, committed);
    seeTransaction(flow, await getTransaction(sandbox, committed.relatedTransactionId));
  },

  async 'payout intent to a beneficiary'(sandbox) {
    const flow = 'payout intent to a beneficiary';
    const intent = await createIntent(sandbox, {
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' },
      creditAmount: '40.00',
      purpose: 'PAYMENT_FOR_SERVICES',
    });
    seeIntent(flow, intent);
    const committed = await commit(sandbox, intent);
    const id = committed.relatedTransactionId as string;
    await advance(sandbox, 1_000);
    seeTransaction(flow, await getTransaction(sandbox, id));
    await advance(sandbox, 3_000);
    seeTransaction(flow, await getTransaction(sandbox, id));
  },

  async 'magic .91 payout'(sandbox) {
    const flow = 'magic .91 payout';
    const intent = await createIntent(sandbox, {
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' },
      creditAmount: '12.91',
    });
    const id = (await commit(sandbox, intent)).relatedTransactionId as string;
    await advance(sandbox, 4_000);
    seeTransaction(flow, await getTransaction(sandbox, id));
  },

  async 'intent cancel'(sandbox) {
    const intent = await createIntent(sandbox, { debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, creditAmount: '1.00' });
    seeIntent('intent cancel', ok(await sandbox.request('POST', `/v1/transaction-intents/${intent.id}/cancel`), 200, 'cancel'));
  },

  async 'intent expiry on the emulated clock'(sandbox) {
    const intent = await createIntent(sandbox, { debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, creditAmount: '1.00' });
    await advance(sandbox, 15 * 60 * 1000 + 1);
    seeIntent('intent expiry on the emulated clock', ok(await sandbox.request('GET', `/v1/transaction-intents/${intent.id}`), 200, 'expired'));
  },

  async 'intent commit without funds'(sandbox) {
    const intent = await createIntent(
      sandbox,
      { debitAccountId: 'acct_jane_usd', credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_john', instrumentId: 'bi_john_usd' }, creditAmount: '9999999.00' },
      AS_JANE,
    );
    seeIntent('intent commit without funds', await commit(sandbox, intent, AS_JANE));
  },

  async 'intents pinned to each rail'(sandbox) {
    const flow = 'intents pinned to each rail';
    const polygon = ok(
      await sandbox.request('POST', '/v1/beneficiaries', {
        type: 'BUSINESS',
        businessName: 'Polygon Payee Ltd',
        instruments: [{ type: 'WALLET', network: 'POLYGON', address: '0x742d35cc6634c0532925a3b844bc454e4438f44e', currency: 'USDC' }],
      }),
      201,
      'polygon beneficiary',
    );
    const pins: Array<[string, string, string, string, string]> = [
      ['acct_acme_usd', 'ben_globex', 'bi_globex_usd', 'BANK_ACCOUNT', 'ACH'],
      ['acct_acme_usd', 'ben_globex', 'bi_globex_usd', 'BANK_ACCOUNT', 'RTP'],
      ['acct_acme_usd', 'ben_globex', 'bi_globex_usd', 'BANK_ACCOUNT', 'WIRE'],
      ['acct_acme_usd', 'ben_globex', 'bi_globex_usd', 'BANK_ACCOUNT', 'SWIFT'],
      ['acct_acme_eur', 'ben_mueller', 'bi_mueller_eur', 'BANK_ACCOUNT', 'SEPA'],
      ['acct_acme_eur', 'ben_mueller', 'bi_mueller_eur', 'BANK_ACCOUNT', 'SEPA_INSTANT'],
      ['acct_acme_usdc', 'ben_nakamoto', 'bi_nakamoto_eth', 'EXTERNAL_WALLET', 'ETHEREUM'],
      ['acct_acme_usdc', 'ben_nakamoto', 'bi_nakamoto_eth', 'EXTERNAL_WALLET', 'EXTERNAL_WALLET'],
      ['acct_acme_usdc', 'ben_nakamoto', 'bi_nakamoto_base', 'EXTERNAL_WALLET', 'BASE'],
      ['acct_acme_usdc', polygon.id, polygon.instruments[0].id, 'EXTERNAL_WALLET', 'POLYGON'],
    ];
    for (const [debitAccountId, beneficiaryId, instrumentId, instrumentType, creditRail] of pins) {
      seeIntent(flow, await createIntent(sandbox, { debitAccountId, credit: { instrumentType, beneficiaryId, instrumentId }, creditAmount: '5.00', creditRail }));
    }
  },

  async 'control-plane injection of each category'(sandbox) {
    const flow = 'control-plane injection of each category';
    for (const category of ['AUTOSWEEP', 'CASH_IN', 'MERCHANT', 'MANUAL', 'AUTOPAY', 'REWARD', 'YIELD_FUNDING', 'YIELD_PAYOUT']) {
      const direction = category === 'AUTOPAY' || category === 'YIELD_FUNDING' || category === 'AUTOSWEEP' ? 'OUTGOING' : 'INCOMING';
      const amount = direction === 'OUTGOING' ? { debitAmount: '1.00' } : { creditAmount: '1.00' };
      const injected = ok(
        await sandbox.app.inject({
          method: 'POST',
          url: '/_emulator/accounts/acct_acme_usd/transactions',
          payload: { type: direction === 'OUTGOING' ? 'TRANSFER' : 'DEPOSIT', direction, category, ...amount, status: 'COMPLETED' },
        }),
        201,
        `inject ${category}`,
      );
      seeTransaction(flow, await getTransaction(sandbox, injected.id));
    }
  },

  async 'control-plane injection of each purpose'(sandbox) {
    const flow = 'control-plane injection of each purpose';
    for (const purpose of INTERFACE['transaction.purpose'].filter((value) => value !== null)) {
      const injected = ok(
        await sandbox.app.inject({
          method: 'POST',
          url: '/_emulator/accounts/acct_jane_usd/transactions',
          payload: { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', purpose },
        }),
        201,
        `inject ${purpose}`,
      );
      seeTransaction(flow, await getTransaction(sandbox, injected.id, AS_JANE));
    }
  },

  async 'injected deposit through a deposit instruction'(sandbox) {
    const injected = ok(
      await sandbox.app.inject({
        method: 'POST',
        url: '/_emulator/accounts/acct_acme_eur/transactions',
        payload: { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '3.00', depositInstructionId: 'di_acme_eur_sepa', status: 'COMPLETED' },
      }),
      201,
      'virtual account',
    );
    seeTransaction('injected deposit through a deposit instruction', await getTransaction(sandbox, injected.id));
  },

  async 'return of a completed payout'(sandbox) {
    const flow = 'return of a completed payout';
    const intent = await createIntent(sandbox, {
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' },
      creditAmount: '60.00',
    });
    const payoutId = (await commit(sandbox, intent)).relatedTransactionId as string;
    await advance(sandbox, 4_000);
    const back = (body: unknown) => sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${payoutId}/return`, payload: body as object });
    const partial = ok(await back({ reasonCode: 'R01', amount: '10.00' }), 201, 'partial return');
    seeTransaction(flow, await getTransaction(sandbox, partial.id));
    const other = await createIntent(sandbox, {
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' },
      creditAmount: '30.00',
    });
    const otherId = (await commit(sandbox, other)).relatedTransactionId as string;
    await advance(sandbox, 4_000);
    const whole = ok(await sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${otherId}/return`, payload: { reasonCode: 'AC04' } }), 201, 'return');
    seeTransaction(flow, await getTransaction(sandbox, whole.id));
  },

  async 'onboarding a new user'(sandbox) {
    const flow = 'onboarding a new user';
    const user = await createUser(sandbox, 'PERSON', 'Enum Walker');
    const requestId = await startEnrollment(sandbox, user.as);
    seeEnrollment(flow, ok(await sandbox.request('GET', '/v1/enrollment', undefined, user.as), 200, flow));
    const invalid = ok(await writeEntries(sandbox, user.as, requestId, [{ key: 'dateOfBirth', value: '2020-01-01' }]), 200, 'under-age entry');
    seeRequest(flow, invalid);
    seeRequest(flow, ok(await writeEntries(sandbox, user.as, requestId, await personEntries('Enum Walker')), 200, 'entries'));
    seeRequest(flow, ok(await submit(sandbox, user.as, requestId), 200, 'submit'));
    await advance(sandbox, 0);
    seeEnrollment(flow, ok(await sandbox.request('GET', '/v1/enrollment', undefined, user.as), 200, flow));
    await advance(sandbox, 60_000);
    seeEnrollment(flow, ok(await sandbox.request('GET', '/v1/enrollment', undefined, user.as), 200, flow));
  },

  async 'rejected onboarding'(sandbox) {
    const flow = 'rejected onboarding';
    const user = await createUser(sandbox, 'PERSON', 'Reject Me');
    const requestId = await startEnrollment(sandbox, user.as);
    await writeEntries(sandbox, user.as, requestId, await personEntries('Reject Me'));
    ok(await submit(sandbox, user.as, requestId), 200, 'submit');
    await advance(sandbox, 60_000);
    seeEnrollment(flow, ok(await sandbox.request('GET', '/v1/enrollment', undefined, user.as), 200, flow));
    const users = ok(await sandbox.request('GET', '/v1/users', undefined, MULTI), 200, 'users');
    const listed = users.data.find((item: any) => item.userId === user.userId);
    see(flow, 'user.enrollmentStatus', listed.enrollmentStatus);
    see(flow, 'user.type', listed.type);
  },

  async 'information request cancel'(sandbox) {
    const flow = 'information request cancel';
    const user = await createUser(sandbox, 'PERSON', 'Cancel Me');
    const requestId = await startEnrollment(sandbox, user.as);
    seeRequest(flow, ok(await sandbox.app.inject({ method: 'POST', url: `/_emulator/information-requests/${requestId}/cancel` }), 200, 'cancel'));
    seeEnrollment(flow, ok(await sandbox.request('GET', '/v1/enrollment', undefined, user.as), 200, flow));
    seeError(flow, await writeEntries(sandbox, user.as, requestId, [{ key: 'legalName', value: 'Cancel Me' }]));
  },

  async 'users list'(sandbox) {
    for (const user of ok(await sandbox.request('GET', '/v1/users', undefined, MULTI), 200, 'users').data) {
      see('users list', 'user.type', user.type);
      see('users list', 'user.enrollmentStatus', user.enrollmentStatus);
    }
  },

  async 'document checks'(sandbox) {
    const user = await createUser(sandbox, 'PERSON', 'Document Checker');
    const requestId = await startEnrollment(sandbox, user.as);
    for (const bytes of [Buffer.from('not a pdf at all'), await makePdf({ userPassword: 'secret' }), await makePdf({ pages: 11 })]) {
      seeError('document checks', await writeEntries(sandbox, user.as, requestId, [{ key: 'identityDocument', value: documentValue(bytes) }]));
    }
  },

  async 'statement of today'(sandbox) {
    const flow = 'statement of today';
    ok(
      await sandbox.app.inject({
        method: 'POST',
        url: '/_emulator/accounts/acct_jane_usd/transactions',
        payload: { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '2.00', status: 'PROCESSING' },
      }),
      201,
      'in flight',
    );
    ok(
      await sandbox.app.inject({
        method: 'POST',
        url: '/_emulator/accounts/acct_jane_usd/transactions',
        payload: { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '2.00', status: 'COMPLETED' },
      }),
      201,
      'settled',
    );
    const statement = ok(await sandbox.request('GET', '/v1/accounts/acct_jane_usd/statement?startDate=2026-03-01&endDate=2026-03-01', undefined, AS_JANE), 200, flow);
    for (const day of statement.days) for (const entry of day.entries) see(flow, 'statementEntry.statusAsOfPeriodEnd', entry.statusAsOfPeriodEnd);
  },

  async 'deposit instruction provisioning'(sandbox) {
    const flow = 'deposit instruction provisioning';
    const accepted = ok(await sandbox.request('POST', '/v1/accounts/acct_acme_eur/deposit-instructions', { name: 'EUR two', idempotencyKey: 'enum-di' }), 202, flow);
    see(flow, 'depositInstruction.status', accepted.status);
    await advance(sandbox, 2_000);
    for (const instruction of ok(await sandbox.request('GET', '/v1/accounts/acct_acme_eur'), 200, flow).depositInstructions) see(flow, 'depositInstruction.status', instruction.status);
  },

  async 'error walk'(sandbox) {
    const flow = 'error walk';
    const single = { apiKey: CREDENTIALS.single.apiKey, secret: CREDENTIALS.single.secret };
    const responses: LightMyRequestResponse[] = [
      await sandbox.app.inject({ method: 'GET', url: '/v1/accounts' }), // UNAUTHORIZED
      await sandbox.request('POST', '/v1/accounts/acct_acme_usd/deposit-instructions', { name: 'x', idempotencyKey: 'x' }, { apiKey: 'pk_sandbox_readonly', secret: 'sk_sandbox_readonly_secret', userId: 'usr_acme' }), // FORBIDDEN
      await sandbox.request('GET', '/v1/accounts/acct_nope'), // NOT_FOUND
      await sandbox.request('POST', '/v1/accounts/acct_acme_gbp/deposit-instructions', { name: 'x', idempotencyKey: 'x' }), // INVALID_REQUEST (409)
      await postPayout(sandbox, {
        as: { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret, userId: 'usr_jane' },
        body: base64(JSON.stringify({ entityId: 'acct_jane_usd', beneficiaryId: 'ben_john', amount: '1.00', currency: 'USD', reference: 'x' })),
      }), // INVALID_USER_TYPE
      await sandbox.request('POST', '/v1/auth/users', { externalId: 'x', type: 'PERSON', name: 'X' }, single), // SINGLE_USER_KEY_NOT_ALLOWED
      await sandbox.request('GET', '/v1/accounts', undefined, MULTI), // USER_ID_HEADER_REQUIRED
      await sandbox.request('GET', '/v1/accounts', undefined, { ...single, userId: 'usr_acme' }), // USER_ID_HEADER_NOT_ALLOWED
      await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { amount: 'ten', depositInstructionId: 'di_acme_usd_ach' }), // InvalidFormat
      await sandbox.request('GET', '/v1/transactions?sortBy=NAME'), // InvalidValue
      await sandbox.request('GET', '/v1/accounts//statement?startDate=2026-02-01&endDate=2026-02-02'), // MissingPathParameter
      await sandbox.request('GET', '/v1/accounts/acct_acme_usd/statement?endDate=2026-02-02'), // MissingQueryParameter
      await sandbox.request('POST', '/v1/transaction-intents'), // MissingRequestBody
      await sandbox.request('POST', '/v1/accounts/acct_acme_usd/deposit-instructions', { idempotencyKey: 'x' }), // MissingValue
      await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { amount: '1.00', depositInstructionId: 'di_nope' }), // NotFound
      await sandbox.request('POST', '/v1/beneficiaries', {
        type: 'BUSINESS',
        businessName: 'Unverifiable Inc',
        instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'U', accountNumber: '9999999999', routingNumber: '021000021' }],
      }), // UnexpectedVerificationError
      await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: {} }), // Unknown (no single field is at fault)
    ];
    for (const response of responses) {
      if (response.statusCode < 400) throw new Error(`error walk: expected an error, got ${response.statusCode} ${response.body}`);
      seeError(flow, response);
    }
  },

  async [P2P_FLOW](sandbox) {
    const intent = await createIntent(sandbox, { debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditAmount: '15.00' });
    const committed = await commit(sandbox, intent);
    seeIntent(P2P_FLOW, committed);
    await advance(sandbox, 4_000);
    seeTransaction(P2P_FLOW, await getTransaction(sandbox, committed.relatedTransactionId));
  },

  async [REFUND_FLOW](sandbox) {
    const deposit = async (amount: string) => {
      ok(await sandbox.request('POST', '/v1/sandbox/accounts/acct_jane_usd/deposits', { amount, depositInstructionId: 'di_jane_usd_ach' }, AS_JANE), 202, 'deposit');
      const [latest] = ok(await sandbox.request('GET', '/v1/transactions?accountId=acct_jane_usd&type=DEPOSIT&pageSize=1', undefined, AS_JANE), 200, 'deposit').data;
      await advance(sandbox, 1_000);
      return latest.id as string;
    };
    const whole = await createIntent(sandbox, { debitAccountId: 'acct_jane_usd', refundOf: await deposit('80.00') }, AS_JANE);
    const part = await createIntent(sandbox, { debitAccountId: 'acct_jane_usd', refundOf: await deposit('90.00'), debitAmount: '30.00' }, AS_JANE);
    for (const intent of [whole, part]) {
      const committed = await commit(sandbox, intent, AS_JANE);
      seeIntent(REFUND_FLOW, committed);
      seeTransaction(REFUND_FLOW, await getTransaction(sandbox, committed.relatedTransactionId, AS_JANE));
    }
  },

  async [DIRECT_DEBIT_FLOW](sandbox) {
    const own = ok(
      await sandbox.request(
        'POST',
        '/v1/beneficiaries',
        {
          type: 'PERSON',
          firstName: 'Jane',
          lastName: 'Doe',
          relationshipToUser: 'SELF',
          instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Jane Doe', accountNumber: '555577777', routingNumber: '021000021' }],
        },
        AS_JANE,
      ),
      201,
      'own bank account',
    );
    const intent = await createIntent(
      sandbox,
      { debit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: own.id, instrumentId: own.instruments[0].id }, credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditAmount: '25.00' },
      AS_JANE,
    );
    const committed = await commit(sandbox, intent, AS_JANE);
    seeIntent(DIRECT_DEBIT_FLOW, committed);
    seeTransaction(DIRECT_DEBIT_FLOW, await getTransaction(sandbox, committed.relatedTransactionId, AS_JANE));
  },

  // Last of the shared sandbox's flows: it takes usr_jane's enrollment away, and with it her money moves.
  async 'enrollment revoke'(sandbox) {
    seeEnrollment('enrollment revoke', ok(await sandbox.app.inject({ method: 'POST', url: '/_emulator/enrollment/usr_jane/revoke' }), 200, 'revoke'));
  },

  async 'database fault'() {
    // Its own sandbox: the fault is made by removing a table under a real route (as errors.test.ts does).
    const faulty = await buildTestApp();
    try {
      faulty.ctx.db.exec('DROP TABLE access_tokens');
      seeError('database fault', await faulty.request('POST', '/v1/auth/token'));
    } finally {
      await faulty.close();
    }
  },
};

t.test('the interface lists match the emulator’s own enums', async (t) => {
  t.same([...TRANSACTION_TYPES], INTERFACE['transaction.type']);
  t.same([...TRANSACTION_STATUSES], INTERFACE['transaction.status']);
  t.same([...TRANSACTION_CATEGORIES, null], INTERFACE['transaction.category']);
  t.same([...PAYMENT_PURPOSES, null], INTERFACE['transaction.purpose']);
  t.same([...INTENT_STATUSES], INTERFACE['intent.status']);
  t.same([...CREDIT_RAILS, null], INTERFACE['intent.creditRail']);
  t.same([...INFORMATION_REQUEST_STATUSES], INTERFACE['informationRequest.status']);
  t.same([...ERROR_CODES], INTERFACE['error.errorCode']);
  t.same([...VALIDATION_ERROR_TYPES], INTERFACE['validationError.type']);
});

t.test('every interface enum value is produced by its named flow over HTTP', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  for (const [name, flow] of Object.entries(FLOWS)) {
    await t.resolves(flow(sandbox), `flow "${name}" ran`);
  }
  // The table covers every value of every list, and nothing else.
  for (const [name, values] of Object.entries(INTERFACE) as Array<[EnumName, readonly Value[]]>) {
    t.same(Object.keys(TABLE[name]).sort(), values.map(key).sort(), `${name}: the table names a flow for each value`);
    for (const value of values) {
      const flow = TABLE[name][key(value)]!;
      const producedBy = observed.get(name)?.get(key(value));
      t.ok(producedBy?.has(flow), `${name} = ${key(value)} <- ${flow}`, { producedBy: producedBy ? [...producedBy] : 'never produced' });
    }
  }
  // Nothing outside the interface's lists was read back.
  for (const [name, values] of observed) {
    const allowed = new Set((INTERFACE[name] as readonly Value[]).map(key));
    for (const value of values.keys()) t.ok(allowed.has(value), `${name} = ${value} is an interface value`);
  }
});
