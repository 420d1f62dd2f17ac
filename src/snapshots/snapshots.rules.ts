import { z } from 'zod';
import { SCOPES } from '../http/scopes.js';
import { TRANSACTION_CATEGORIES, TRANSACTION_STATUSES, TRANSACTION_TYPES, PAYMENT_PURPOSES } from '../domains/transactions/transactions.machine.js';
import { feeSchema, instrumentSchema, partySchema, transactionSchema } from '../domains/transactions/transactions.schema.js';
import { INTENT_STATUSES } from '../domains/intents/intents.machine.js';
import { ENROLLMENT_REASONS, ENROLLMENT_STATUSES } from '../domains/enrollment/enrollment.machine.js';
import { INFORMATION_REQUEST_STATUSES } from '../domains/information-requests/information-requests.machine.js';
import { DECISIONS } from '../domains/information-requests/information-requests.schema.js';
import { ENTRY_SOURCES, REQUIREMENT_SETS, REQUIREMENT_STATUSES } from '../domains/information-requests/requirements.js';
import { RELATIONSHIPS } from '../domains/beneficiaries/beneficiaries.schema.js';
import { CHAOS_KINDS, DELIVERY_STATUSES, webhookUrl } from '../domains/webhooks/webhooks.schema.js';
import { WEBHOOK_EVENT_TYPES } from '../core/webhook-events.js';
import { WALLET_NETWORKS } from '../domains/fees-fx/fees-fx.schema.js';
import { JOB_STATUSES } from '../scheduler/scheduler.js';
import { RAIL_STEP_JOB } from '../domains/transactions/transactions.rail.js';
import { INTENT_EXPIRY_JOB } from '../domains/intents/intents.service.js';
import { REVIEW_JOB, SUBMISSION_PROCESSING_JOB } from '../domains/information-requests/information-requests.service.js';
import { PROVISION_DEPOSIT_INSTRUCTION_JOB } from '../domains/deposit-instructions/deposit-instructions.service.js';
import { WEBHOOK_RETRY_JOB } from '../domains/webhooks/webhooks.queue.js';
import { PROVIDER_READY_JOB } from '../domains/accounts/account-templates.js';

// What a row of each state table may hold in a snapshot file (docs/control-plane.md#snapshots, docs/robustness.md#hostile-files):
// the values the API itself writes, table by table and column by column. An uploaded file's rows are checked with these
// rules before anything of it is stored (snapshots.check.ts), so a restored sandbox never holds a value no request could
// have made (a status outside its machine, an amount that is not integer minor units, stored JSON that does not parse or
// does not match its schema). Every column of every state table has a rule: a migration that adds a table or a column
// adds its rules here (test/emulator/snapshots-rules.test.ts fails until it does).

/** What is wrong with a value (a phrase after the column's name), or null when it is one the API could have written. */
export type Rule = (value: unknown) => string | null;

const shown = (value: unknown): string => {
  if (Buffer.isBuffer(value)) return `a ${value.length}-byte blob`;
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** A value or NULL. */
const nullable =
  (rule: Rule): Rule =>
  (value) =>
    value === null ? null : rule(value);

/** Text of at most `max` characters (1 MiB by default: no field the API takes is near that). */
const text =
  (max = 1_048_576): Rule =>
  (value) =>
    typeof value !== 'string' ? `is ${shown(value)}, not text` : value.length > max ? `is ${value.length} characters long, more than ${max}` : null;

const nonEmpty: Rule = (value) => text()(value) ?? ((value as string).length === 0 ? 'is empty' : null);

const oneOf =
  (values: readonly (string | number)[]): Rule =>
  (value) =>
    values.includes(value as string) ? null : `is ${shown(value)}, not one of ${values.join(', ')}`;

/** An id the API or the fixtures made: the prefix, then letters, digits and underscores (fixtures.schema.ts `prefixed`). */
const id =
  (prefix: string): Rule =>
  (value) =>
    typeof value === 'string' && value.length <= 128 && new RegExp(`^${prefix}_[A-Za-z0-9_]+$`).test(value)
      ? null
      : `is ${shown(value)}, not an id starting with ${prefix}_`;

/** An integer SQLite stores as one (never text, a real or a blob) between `min` and `max`. */
const integer =
  (min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): Rule =>
  (value) =>
    typeof value !== 'number' || !Number.isSafeInteger(value)
      ? `is ${shown(value)}, not an integer`
      : value < min || value > max
        ? `is ${value}, outside ${min}..${max}`
        : null;

/** Amounts are integer minor units; no balance or amount the API accepts comes near 2^53. */
const amount = integer();
const count = integer(0);
const flag = oneOf([0, 1]);
/** Instants in ms: the clock never leaves 0000-01-01..9999-12-31 (docs/decisions.md#snapshots). */
const MIN_MS = -62_167_219_200_000;
const MAX_MS = 253_402_300_799_999;
const ms = integer(MIN_MS, MAX_MS);

/** A decimal integer stored as text (the id counter, the clock's high-water mark), between `min` and `max`. */
const integerText =
  (min: number, max: number): Rule =>
  (value) =>
    typeof value === 'string' && /^-?(0|[1-9][0-9]{0,15})$/.test(value)
      ? integer(min, max)(Number(value))
      : `is ${shown(value)}, not an integer written as text`;

/** The clock's record (src/db/clock-store.ts): a frozen instant inside the clock's range, or an offset that keeps it there. */
const clockStateSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('frozen'), frozenAtMs: z.number().min(MIN_MS).max(MAX_MS) }),
  z.strictObject({ mode: z.literal('realtime'), offsetMs: z.number().min(MIN_MS - MAX_MS).max(MAX_MS - MIN_MS) }),
]);

/** An instant as the API writes it: `toISOString()`, years 0000-9999. */
const instant: Rule = (value) =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) && new Date(value).toISOString() === value
    ? null
    : `is ${shown(value)}, not an instant such as 2026-03-01T12:00:00.000Z`;

const date: Rule = (value) =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`))
    ? null
    : `is ${shown(value)}, not a date such as 2026-03-01`;

const currency: Rule = (value) => (typeof value === 'string' && /^[A-Z][A-Z0-9_]{2,15}$/.test(value) ? null : `is ${shown(value)}, not a currency code`);

/** Stored JSON: it parses, and matches `schema` (any JSON of the given kind when none is named). */
const json =
  (schema: z.ZodType): Rule =>
  (value) => {
    const problem = text()(value);
    if (problem) return problem;
    let parsed: unknown;
    try {
      parsed = JSON.parse(value as string);
    } catch {
      return `is ${shown(value)}, not JSON`;
    }
    const result = schema.safeParse(parsed);
    if (result.success) return null;
    const issue = result.error.issues[0]!;
    return `holds JSON that does not match its schema (${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message})`;
  };
const anyObject = z.record(z.string(), z.unknown());
const strings = z.array(z.string());

/** A value `schema` accepts, as its first issue's message when it does not. */
const matches =
  (schema: z.ZodType): Rule =>
  (value) => {
    const result = schema.safeParse(value);
    return result.success ? null : `is ${shown(value)}: ${result.error.issues[0]!.message}`;
  };

/**
 * The job types some module has a handler for (test/emulator/snapshots-rules.test.ts compares them with the app's
 * table, src/modules.ts): a job of another type would only ever fail with "no handler".
 */
export const JOB_TYPES = [
  RAIL_STEP_JOB,
  INTENT_EXPIRY_JOB,
  REVIEW_JOB,
  SUBMISSION_PROCESSING_JOB,
  PROVISION_DEPOSIT_INSTRUCTION_JOB,
  WEBHOOK_RETRY_JOB,
  PROVIDER_READY_JOB,
] as const;

const blob: Rule = (value) => (Buffer.isBuffer(value) ? null : `is ${shown(value)}, not a blob`);
const scopes: Rule = (value) => {
  const problem = text(4096)(value);
  if (problem) return problem;
  const unknown = (value as string).split(' ').filter((scope) => scope !== '' && !(SCOPES as readonly string[]).includes(scope));
  return unknown.length ? `names unknown scopes (${unknown.slice(0, 3).join(', ')})` : null;
};
const httpStatus = integer(100, 599);

const PROGRAMME = id('prg');
const USER = id('usr');
const ACCOUNT = id('acct');
const TRANSACTION = id('txn');
const BENEFICIARY = id('ben');
/** The scope of a list counter: `programme:`, `user:` or `account:` and an id. */
const counterScope: Rule = (value) =>
  typeof value === 'string' && /^(programme|user|account):[A-Za-z0-9_]{1,128}$/.test(value) ? null : `is ${shown(value)}, not a counter scope such as user:usr_x`;

const createdUpdated = { created_at: instant, updated_at: instant };

/** Every state table of this build (and sqlite_sequence), every column: the rule its values follow. */
export const ROW_RULES: Record<string, Record<string, Rule>> = {
  access_tokens: { token_hash: text(128), programme_id: PROGRAMME, user_id: USER, scopes, expires_at_ms: ms, created_at: instant },
  accounts: {
    id: ACCOUNT,
    programme_id: PROGRAMME,
    user_id: USER,
    parent_account_id: nullable(ACCOUNT),
    kind: oneOf(['FIAT', 'STABLECOIN', 'SUB_BALANCE']),
    currency,
    country: nullable(text(2)),
    network: nullable(oneOf(WALLET_NETWORKS)),
    status: text(64),
    status_reason: nullable(text(1000)),
    display_name: nullable(text(1000)),
    deposit_reconciliation_id: text(256),
    provider_ready: flag,
    created_at: instant,
    created_at_ms: ms,
    updated_at: instant,
  },
  api_keys: { api_key: nonEmpty, programme_id: PROGRAMME, secret: nonEmpty, integration_type: oneOf(['SINGLE_USER', 'MULTI_USER']), user_id: nullable(USER) },
  beneficiaries: {
    id: BENEFICIARY,
    programme_id: PROGRAMME,
    user_id: USER,
    counterparty_id: id('cp'),
    type: oneOf(['PERSON', 'BUSINESS']),
    first_name: nullable(text(1000)),
    last_name: nullable(text(1000)),
    date_of_birth: nullable(date),
    business_name: nullable(text(1000)),
    registration_number: nullable(text(1000)),
    display_name: nullable(text(1000)),
    email: nullable(text(1000)),
    phone_number: nullable(text(100)),
    address: nullable(json(anyObject)),
    relationship_to_user: nullable(oneOf(RELATIONSHIPS)),
    created_at: instant,
    created_at_ms: ms,
    updated_at: instant,
  },
  beneficiary_instruments: {
    id: id('bi'),
    beneficiary_id: BENEFICIARY,
    position: count,
    type: oneOf(['BANK_ACCOUNT', 'WALLET']),
    currency,
    country: nullable(text(2)),
    account_holder_name: nullable(text(1000)),
    account_number: nullable(text(100)),
    routing_number: nullable(text(100)),
    iban: nullable(text(100)),
    bic: nullable(text(100)),
    network: nullable(oneOf(WALLET_NETWORKS)),
    address: nullable(text(1000)),
    created_at: instant,
  },
  deposit_instruction_requests: {
    id: id('di'),
    account_id: ACCOUNT,
    user_id: USER,
    name: text(1000),
    idempotency_key: text(1000),
    status: oneOf(['PENDING', 'PROVISIONED']),
    rail_type: nonEmpty,
    network: nullable(oneOf(WALLET_NETWORKS)),
    details: json(anyObject),
    created_at: instant,
    created_at_ms: ms,
    provisioned_at: nullable(instant),
  },
  deposit_instructions: {
    id: id('di'),
    account_id: ACCOUNT,
    name: text(1000),
    idempotency_key: nullable(text(1000)),
    status: oneOf(['PENDING', 'ACTIVE']),
    rail_type: nonEmpty,
    rail_label: text(1000),
    supported_currencies: json(strings),
    fields: json(z.array(anyObject)),
    disclosures: json(z.array(anyObject)),
    network: nullable(oneOf(WALLET_NETWORKS)),
    wallet_address: nullable(text(1000)),
    created_at: instant,
    created_at_ms: ms,
    updated_at: instant,
  },
  enrollments: {
    id: id('enr'),
    programme_id: PROGRAMME,
    user_id: USER,
    status: oneOf(ENROLLMENT_STATUSES),
    reason: nullable(oneOf(ENROLLMENT_REASONS)),
    reason_detail: nullable(text(1000)),
    information_request_id: id('ir'),
    ...createdUpdated,
  },
  idempotency_records: {
    scope: nonEmpty,
    owner: nonEmpty,
    key: text(1000),
    request_hash: nonEmpty,
    response_status: httpStatus,
    response_body: json(z.unknown()),
    created_at: instant,
  },
  in_flight_credits: { account_id: ACCOUNT, amount_minor: amount },
  information_request_entries: {
    request_id: id('ir'),
    key: nonEmpty,
    value: json(z.unknown()),
    source: oneOf(ENTRY_SOURCES),
    confirmed: flag,
    updated_at: instant,
  },
  information_requests: {
    id: id('ir'),
    programme_id: PROGRAMME,
    user_id: USER,
    subject_type: oneOf(['ENROLLMENT']),
    subject_id: nonEmpty,
    requirement_set: oneOf(REQUIREMENT_SETS),
    status: oneOf(INFORMATION_REQUEST_STATUSES),
    validation_status: oneOf(REQUIREMENT_STATUSES),
    decision: nullable(oneOf(DECISIONS)),
    title: nullable(text(1000)),
    evaluation: json(anyObject),
    submitted_at: nullable(instant),
    decided_at: nullable(instant),
    created_at: instant,
    created_at_ms: ms,
    updated_at: instant,
  },
  jobs: {
    id: integer(1),
    type: oneOf(JOB_TYPES),
    due_at_ms: ms,
    payload: json(anyObject),
    status: oneOf(JOB_STATUSES),
    attempts: count,
    last_error: nullable(text()),
    created_at_ms: ms,
  },
  ledger_entries: {
    id: integer(1),
    account_id: ACCOUNT,
    transaction_id: TRANSACTION,
    kind: oneOf(['PRINCIPAL', 'FEE', 'REVERSAL']),
    amount_minor: amount,
    currency,
    is_fee: flag,
    description: text(),
    posted_at: instant,
    posted_at_ms: ms,
    available_after_minor: nullable(amount),
    in_flight: flag,
  },
  // the value's rule is its key's (META_VALUES, checked by rowProblem)
  meta: { key: oneOf(['id_counter', 'clock_state', 'clock_high_water_ms', 'scenario_play']), value: text() },
  outbox: {
    seq: integer(1),
    event_id: id('evt'),
    programme_id: PROGRAMME,
    user_id: nullable(USER),
    resource_type: oneOf(['transaction']),
    resource_id: TRANSACTION,
    event_type: oneOf(WEBHOOK_EVENT_TYPES),
    occurred_at: instant,
    payload: json(anyObject),
  },
  programmes: { id: PROGRAMME, name: text(1000), webhook_api_key: nonEmpty, webhook_secret: nonEmpty, webhook_url: nullable(matches(webhookUrl.max(2048))) },
  sqlite_sequence: { name: text(200), seq: count },
  statement_files: {
    id: id('sf'),
    programme_id: PROGRAMME,
    user_id: USER,
    account_id: ACCOUNT,
    format: oneOf(['csv', 'pdf']),
    file_name: text(1000),
    content_type: text(200),
    content: blob,
    size_bytes: count,
    created_at: instant,
    created_at_ms: ms,
    expires_at_ms: ms,
  },
  transaction_accounts: {
    account_id: ACCOUNT,
    transaction_id: TRANSACTION,
    type: oneOf(TRANSACTION_TYPES),
    status: oneOf(TRANSACTION_STATUSES),
    created_at_ms: ms,
    updated_at_ms: ms,
  },
  transaction_counts: { scope: counterScope, type: oneOf(TRANSACTION_TYPES), status: oneOf(TRANSACTION_STATUSES), n: count },
  transaction_intents: {
    id: id('ti'),
    programme_id: PROGRAMME,
    user_id: USER,
    idempotency_key: text(1000),
    request_hash: nonEmpty,
    type: oneOf(TRANSACTION_TYPES),
    category: nullable(oneOf(['P2P', 'DIRECT_DEBIT'])),
    status: oneOf(INTENT_STATUSES),
    status_reason: text(1000),
    debit_account_id: nullable(ACCOUNT),
    credit_account_id: nullable(ACCOUNT),
    beneficiary_id: nullable(BENEFICIARY),
    beneficiary_instrument_id: nullable(id('bi')),
    refund_of_transaction_id: nullable(TRANSACTION),
    debit_amount_minor: amount,
    principal_minor: amount,
    debit_currency: currency,
    credit_amount_minor: amount,
    credit_currency: currency,
    debit_instrument: json(instrumentSchema),
    credit_instrument: nullable(json(instrumentSchema)),
    debit_party: nullable(json(partySchema)),
    debit_rail_type: nullable(text(200)),
    credit_party: nullable(json(partySchema)),
    fees: json(z.array(feeSchema)),
    exchange_rate: text(100),
    base_exchange_rate: text(100),
    fx_spread: text(100),
    credit_rail: nullable(text(200)),
    credit_rail_type: nullable(text(200)),
    debit_memo: nullable(text(10_000)),
    purpose: nullable(oneOf(PAYMENT_PURPOSES)),
    amount_written: flag,
    related_transaction_id: nullable(TRANSACTION),
    expires_at: instant,
    expires_at_ms: ms,
    created_at: instant,
    created_at_ms: ms,
    updated_at: instant,
    updated_at_ms: ms,
    written_amount: nullable(oneOf(['DEBIT', 'CREDIT'])),
  },
  transaction_time_counts: { scope: counterScope, field: oneOf(['c', 'u']), bucket: integer(), n: count },
  transactions: {
    id: TRANSACTION,
    programme_id: PROGRAMME,
    user_id: USER,
    account_id: ACCOUNT,
    debit_account_id: nullable(ACCOUNT),
    credit_account_id: nullable(ACCOUNT),
    direction: oneOf(['INCOMING', 'OUTGOING']),
    type: oneOf(TRANSACTION_TYPES),
    status: oneOf(TRANSACTION_STATUSES),
    status_reason: nullable(text(1000)),
    status_code: nullable(text(200)),
    category: nullable(oneOf(TRANSACTION_CATEGORIES)),
    reference_number: nonEmpty,
    external_id: nullable(text(1000)),
    deposit_reconciliation_id: nullable(text(256)),
    related_transaction_id: nullable(TRANSACTION),
    debit_amount_minor: amount,
    net_debit_amount_minor: nullable(amount),
    debit_currency: currency,
    debit_party: nullable(json(partySchema)),
    debit_rail: nullable(text(200)),
    debit_memo: nullable(text(10_000)),
    debit_reference: nullable(text(10_000)),
    debit_entry_descriptor: nullable(text(1000)),
    debit_instrument: nullable(json(instrumentSchema)),
    credit_amount_minor: amount,
    credit_currency: currency,
    credit_party: nullable(json(partySchema)),
    credit_rail: nullable(text(200)),
    credit_instrument: nullable(json(instrumentSchema)),
    fees: json(z.array(feeSchema)),
    exchange_rate: nullable(text(100)),
    base_exchange_rate: nullable(text(100)),
    fx_spread: nullable(text(100)),
    tags: json(strings),
    purpose: nullable(oneOf(PAYMENT_PURPOSES)),
    rail_behaviour: oneOf(['NORMAL', 'REJECT', 'HOLD', 'NONE']),
    intent_id: nullable(id('ti')),
    created_at: instant,
    created_at_ms: ms,
    updated_at: instant,
    updated_at_ms: ms,
    completed_at: nullable(instant),
    // the REST object as a read answers it (NULL: stale, rebuilt on the next read)
    rest_json: nullable(json(transactionSchema)),
  },
  users: {
    id: USER,
    programme_id: PROGRAMME,
    external_id: text(1000),
    type: oneOf(['PERSON', 'BUSINESS']),
    name: text(1000),
    email: nullable(text(1000)),
    enrollment_status: oneOf(ENROLLMENT_STATUSES),
    enrollment_status_reason: nullable(text(1000)),
    enrollment_started_at: nullable(instant),
    created_at: instant,
    created_at_ms: ms,
    updated_at: instant,
  },
  webhook_attempts: {
    id: integer(1),
    delivery_id: id('dlv'),
    number: integer(1),
    kind: oneOf(['SCHEDULED', 'REPLAY', 'DUPLICATE']),
    url: text(2048),
    attempted_at: instant,
    attempted_at_ms: ms,
    signed_at_ms: integer(),
    request_headers: json(z.record(z.string(), z.string())),
    request_body: text(),
    outcome: oneOf(['SUCCEEDED', 'FAILED']),
    response_status: nullable(httpStatus),
    response_body: nullable(text()),
    error: nullable(text()),
    latency_ms: count,
    chaos: json(z.array(z.union([z.enum(CHAOS_KINDS), anyObject]))),
  },
  webhook_deliveries: {
    id: id('dlv'),
    event_seq: integer(1),
    event_id: id('evt'),
    programme_id: PROGRAMME,
    resource_id: TRANSACTION,
    event_type: oneOf(WEBHOOK_EVENT_TYPES),
    status: oneOf(DELIVERY_STATUSES),
    attempt_count: count,
    next_attempt_at: nullable(instant),
    last_attempt_at: nullable(instant),
    last_response_status: nullable(httpStatus),
    last_error: nullable(text()),
    delivered_at: nullable(instant),
    ...createdUpdated,
  },
};

/**
 * What each `meta` row may hold, by key (docs/robustness.md#hostile-files): the id counter (src/db/id-counter.ts), the
 * clock's record and high-water mark (src/db/clock-store.ts), a played scenario's progress (the control plane's).
 */
const META_VALUES: Record<string, Rule> = {
  id_counter: integerText(0, Number.MAX_SAFE_INTEGER),
  clock_state: json(clockStateSchema),
  clock_high_water_ms: integerText(MIN_MS, MAX_MS),
  scenario_play: json(anyObject),
};

/** Rules over a whole row, where one column's rule depends on another column's value. */
const WHOLE_ROW_RULES: Record<string, (value: (column: string) => unknown) => string | null> = {
  meta: (value) => {
    const problem = META_VALUES[value('key') as string]?.(value('value'));
    return problem ? `column value (key ${String(value('key'))}) ${problem}` : null;
  },
};

/** The first thing wrong in a row (columns in file order), as "column status: is "BOGUS", not one of ...", or null. */
export function rowProblem(table: string, columns: string[], row: unknown[], offset: number): string | null {
  const rules = ROW_RULES[table];
  if (!rules) return `this build has no rules for table ${table}`;
  for (let i = 0; i < columns.length; i += 1) {
    const rule = rules[columns[i]!];
    const problem = rule ? rule(row[i + offset]) : 'has no rule in this build';
    if (problem) return `column ${columns[i]} ${problem}`;
  }
  return WHOLE_ROW_RULES[table]?.((column) => row[columns.indexOf(column) + offset]) ?? null;
}
