import { prepared } from '../../db/connection.js';
import { readPage, type PageRequest } from '../../db/page.js';
import type { AppContext } from '../../context.js';
import { errors, type ValidationError } from '../../core/errors.js';
import type { Page } from '../../core/page.js';
import type { ProgrammeFixture } from '../../fixtures/fixtures.schema.js';
import { FixturesError } from '../../fixtures/fixtures.loader.js';
import type { Caller } from '../../core/caller.js';
import type { Instrument, Party } from '../transactions/transactions.schema.js';
import type { CreditRail } from '../fees-fx/fees-fx.schema.js';
import { abaRoutingValid, ibanChecksumValid, IBAN_FORMAT, isIsoCountry, maskOf, normalizeIban, VERIFICATION_FAILURE_ACCOUNT_NUMBER } from './bank-validation.js';
import {
  bankAccountNumberOf,
  beneficiaryName,
  createBeneficiaryBody,
  instrumentDisplayName,
  toBeneficiary,
  toBeneficiaryInstrument,
  type Beneficiary,
  type BeneficiaryInstrument,
  type BeneficiaryInstrumentRow,
  type BeneficiaryRow,
  type CreateBeneficiaryInput,
} from './beneficiaries.schema.js';

// Beneficiaries (docs/money-out.md#beneficiaries, interface 2.12, 4.14, 4.15) and the credit side they give a payout:
// the instrument, the BENEFICIARY party (interface 2.5) and the rails an instrument can be paid over.

/** The checks that need more than one field or the fixtures; every failure is a field-level error. */
export function beneficiaryProblems(ctx: AppContext, input: CreateBeneficiaryInput): ValidationError[] {
  const problems: ValidationError[] = [];
  const add = (type: ValidationError['type'], fieldRef: string, message: string) => problems.push({ type, fieldRef, message });
  const supported = Object.keys(ctx.fixtures.currencies);
  const today = ctx.clock.nowIso().slice(0, 10);

  if (input.type === 'PERSON' && input.dateOfBirth && input.dateOfBirth > today) {
    add('InvalidValue', 'dateOfBirth', `dateOfBirth ${input.dateOfBirth} is in the future (today is ${today})`);
  }

  input.instruments.forEach((instrument, index) => {
    const at = (field: string) => `instruments.${index}.${field}`;
    if (!ctx.fixtures.currencies[instrument.currency]) {
      add('InvalidValue', at('currency'), `${at('currency')}: ${instrument.currency} is not a currency of this sandbox; supported: ${supported.join(', ')}`);
    }
    if (instrument.type !== 'BANK_ACCOUNT') return;
    if (instrument.country === 'US') {
      if (instrument.routingNumber === undefined) {
        add('MissingValue', at('routingNumber'), `${at('routingNumber')} is required for a US bank account (9-digit ABA routing number)`);
      } else if (!abaRoutingValid(instrument.routingNumber)) {
        add('InvalidValue', at('routingNumber'), `${at('routingNumber')} ${instrument.routingNumber} fails the ABA checksum (weights 3-7-1 must sum to a multiple of 10)`);
      }
      if (instrument.accountNumber === undefined) {
        add('MissingValue', at('accountNumber'), `${at('accountNumber')} is required for a US bank account (4-17 digits)`);
      } else if (!/^\d{4,17}$/.test(instrument.accountNumber)) {
        add('InvalidFormat', at('accountNumber'), `${at('accountNumber')} must be 4-17 digits for a US bank account`);
      }
      if (instrument.iban !== undefined) {
        add('InvalidValue', at('iban'), `${at('iban')}: US bank accounts have no IBAN; send routingNumber and accountNumber`);
      }
    } else {
      if (instrument.routingNumber !== undefined) {
        add('InvalidValue', at('routingNumber'), `${at('routingNumber')}: ABA routing numbers are for US bank accounts only; outside the US send iban (or accountNumber) and bic`);
      }
      if (instrument.iban === undefined && instrument.accountNumber === undefined) {
        add('MissingValue', at('iban'), `${at('iban')} (or accountNumber) is required for a bank account outside the US`);
      }
    }
    if (instrument.iban !== undefined) {
      const iban = normalizeIban(instrument.iban);
      if (!IBAN_FORMAT.test(iban)) {
        add('InvalidFormat', at('iban'), `${at('iban')} must be a country code, 2 check digits and 11-30 letters or digits`);
      } else if (!isIsoCountry(iban.slice(0, 2))) {
        add('InvalidValue', at('iban'), `${at('iban')} starts with ${iban.slice(0, 2)}, which is not an ISO 3166-1 country code`);
      } else if (!ibanChecksumValid(iban)) {
        add('InvalidValue', at('iban'), `${at('iban')} check digits are wrong (ISO 13616 mod-97 check failed); check the IBAN for a typo`);
      } else if (iban.slice(0, 2) !== instrument.country) {
        add('InvalidValue', at('iban'), `${at('iban')} is a ${iban.slice(0, 2)} IBAN but ${at('country')} is ${instrument.country}`);
      }
    }
  });

  // docs/money-out.md#beneficiaries, interface 2.12: a bank outside the US needs the address; each missing part is
  // reported.
  const foreignBank = input.instruments.findIndex((instrument) => instrument.type === 'BANK_ACCOUNT' && instrument.country !== 'US');
  if (foreignBank >= 0 && input.address === undefined) {
    for (const part of ['line1', 'city', 'postalCode', 'country']) {
      add('MissingValue', `address.${part}`, `address.${part} is required because instruments.${foreignBank} is a bank account outside the US`);
    }
  }
  return problems;
}

export interface BeneficiaryIds {
  id: string;
  counterpartyId: string;
  instrumentIds: string[];
  createdAt: string;
}

function insertBeneficiary(ctx: AppContext, programmeId: string, userId: string, input: CreateBeneficiaryInput, ids: BeneficiaryIds): void {
  const address = input.address
    ? JSON.stringify({
        line1: input.address.line1,
        line2: input.address.line2 ?? null,
        city: input.address.city,
        region: input.address.region ?? null,
        postalCode: input.address.postalCode,
        country: input.address.country,
      })
    : null;
  prepared(
    ctx.db,
    `INSERT INTO beneficiaries (id, programme_id, user_id, counterparty_id, type, first_name, last_name, date_of_birth, business_name,
       registration_number, display_name, email, phone_number, address, relationship_to_user, created_at, created_at_ms, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    ids.id,
    programmeId,
    userId,
    ids.counterpartyId,
    input.type,
    input.type === 'PERSON' ? input.firstName : null,
    input.type === 'PERSON' ? input.lastName : null,
    input.type === 'PERSON' ? (input.dateOfBirth ?? null) : null,
    input.type === 'BUSINESS' ? input.businessName : null,
    input.type === 'BUSINESS' ? (input.registrationNumber ?? null) : null,
    input.displayName ?? null,
    input.email ?? null,
    input.phoneNumber ?? null,
    address,
    input.relationshipToUser ?? null,
    ids.createdAt,
    Date.parse(ids.createdAt),
    ids.createdAt,
  );
  input.instruments.forEach((instrument, position) => {
    const bank = instrument.type === 'BANK_ACCOUNT' ? instrument : null;
    const wallet = instrument.type === 'WALLET' ? instrument : null;
    prepared(
      ctx.db,
      `INSERT INTO beneficiary_instruments (id, beneficiary_id, position, type, currency, country, account_holder_name, account_number,
         routing_number, iban, bic, network, address, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      ids.instrumentIds[position],
      ids.id,
      position,
      instrument.type,
      instrument.currency,
      bank?.country ?? null,
      bank?.accountHolderName ?? null,
      bank?.accountNumber ?? null,
      bank?.routingNumber ?? null,
      bank?.iban !== undefined ? normalizeIban(bank.iban) : null,
      bank?.bic ?? null,
      wallet?.network ?? null,
      wallet?.address ?? null,
      ids.createdAt,
    );
  });
}

/**
 * The emulated downstream verification of bank details, run once every local check has passed: the magic
 * account number of docs/money-out.md#magic-values fails it (interface 7.2 UnexpectedVerificationError).
 */
export function verificationProblems(input: CreateBeneficiaryInput): ValidationError[] {
  const problems: ValidationError[] = [];
  input.instruments.forEach((instrument, index) => {
    if (instrument.type === 'BANK_ACCOUNT' && instrument.accountNumber === VERIFICATION_FAILURE_ACCOUNT_NUMBER) {
      const fieldRef = `instruments.${index}.accountNumber`;
      problems.push({
        type: 'UnexpectedVerificationError',
        fieldRef,
        message: `${fieldRef}: the bank account could not be verified (the verification service returned an unexpected error); try again later or use other details`,
      });
    }
  });
  return problems;
}

export function createBeneficiary(ctx: AppContext, caller: Caller, input: CreateBeneficiaryInput): Beneficiary {
  return ctx.db.transaction(() => createBeneficiaryNow(ctx, caller, input)).immediate();
}

function createBeneficiaryNow(ctx: AppContext, caller: Caller, input: CreateBeneficiaryInput): Beneficiary {
  const local = beneficiaryProblems(ctx, input);
  const problems = local.length > 0 ? local : verificationProblems(input);
  if (problems.length > 0) {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
    throw errors.invalid(`Invalid beneficiary: ${problems[0]!.message}${more}`, problems);
  }
  const ids: BeneficiaryIds = {
    id: ctx.ids.id('beneficiary'),
    counterpartyId: ctx.ids.id('counterparty'),
    instrumentIds: input.instruments.map(() => ctx.ids.id('beneficiaryInstrument')),
    createdAt: ctx.clock.nowIso(),
  };
  insertBeneficiary(ctx, caller.programmeId, caller.userId, input, ids);
  return toBeneficiary(getBeneficiaryRow(ctx, ids.id)!, instrumentsOf(ctx, ids.id));
}

function getBeneficiaryRow(ctx: AppContext, id: string): BeneficiaryRow | undefined {
  return prepared<BeneficiaryRow>(ctx.db, 'SELECT * FROM beneficiaries WHERE id = ?').get(id);
}

export function instrumentsOf(ctx: AppContext, beneficiaryId: string): BeneficiaryInstrumentRow[] {
  return prepared<BeneficiaryInstrumentRow>(ctx.db, 'SELECT * FROM beneficiary_instruments WHERE beneficiary_id = ? ORDER BY position').all(beneficiaryId);
}

/**
 * The caller's beneficiary. Like accounts (docs/decisions.md#status-codes): unknown or another programme's id is 404,
 * another user's beneficiary of the same programme is 403.
 */
export function requireOwnBeneficiary(ctx: AppContext, caller: Caller, beneficiaryId: string): BeneficiaryRow {
  const row = getBeneficiaryRow(ctx, beneficiaryId);
  if (!row || row.programme_id !== caller.programmeId) throw errors.notFound(`Beneficiary ${beneficiaryId} not found`);
  if (row.user_id !== caller.userId) throw errors.forbidden(`Beneficiary ${beneficiaryId} belongs to another user`);
  return row;
}

/** One instrument of a beneficiary; an id of another beneficiary's instrument is 404 like an unknown one. */
export function requireInstrument(ctx: AppContext, beneficiary: BeneficiaryRow, instrumentId: string): BeneficiaryInstrumentRow {
  const row = prepared<BeneficiaryInstrumentRow>(ctx.db, 'SELECT * FROM beneficiary_instruments WHERE id = ? AND beneficiary_id = ?').get(
    instrumentId,
    beneficiary.id,
  );
  if (!row) throw errors.notFound(`Instrument ${instrumentId} is not an instrument of beneficiary ${beneficiary.id}`);
  return row;
}

// Listed like accounts (docs/decisions.md#list-orders): createdAt ascending, then id, so pages stay stable as
// beneficiaries are added.
export function listBeneficiaries(ctx: AppContext, caller: Caller, page: PageRequest): Page<Beneficiary> {
  return readPage<BeneficiaryRow, Beneficiary>(
    ctx.db,
    { columns: '*', from: 'beneficiaries WHERE user_id = ?', orderBy: 'created_at_ms, id' },
    [caller.userId],
    page,
    (row) => toBeneficiary(row, instrumentsOf(ctx, row.id)),
  );
}

export function getBeneficiary(ctx: AppContext, caller: Caller, beneficiaryId: string): Beneficiary {
  const row = requireOwnBeneficiary(ctx, caller, beneficiaryId);
  return toBeneficiary(row, instrumentsOf(ctx, row.id));
}

export function listBeneficiaryInstruments(ctx: AppContext, caller: Caller, beneficiaryId: string): { instruments: BeneficiaryInstrument[] } {
  const row = requireOwnBeneficiary(ctx, caller, beneficiaryId);
  return { instruments: instrumentsOf(ctx, row.id).map(toBeneficiaryInstrument) };
}

/**
 * The caller's bank instrument paid to this IBAN or account number (pacs.008 `CdtrAcct`), oldest
 * beneficiary first.
 */
export function findBankInstrument(
  ctx: AppContext,
  caller: Caller,
  account: { iban?: string; accountNumber?: string },
): { beneficiary: BeneficiaryRow; instrument: BeneficiaryInstrumentRow } | undefined {
  const instrument =
    account.iban !== undefined
      ? prepared<BeneficiaryInstrumentRow>(
          ctx.db,
          `SELECT i.* FROM beneficiary_instruments i JOIN beneficiaries b ON b.id = i.beneficiary_id
            WHERE b.user_id = ? AND i.iban = ? ORDER BY b.created_at_ms, b.id, i.position LIMIT 1`,
        ).get(caller.userId, normalizeIban(account.iban))
      : prepared<BeneficiaryInstrumentRow>(
          ctx.db,
          `SELECT i.* FROM beneficiary_instruments i JOIN beneficiaries b ON b.id = i.beneficiary_id
            WHERE b.user_id = ? AND i.account_number = ? ORDER BY b.created_at_ms, b.id, i.position LIMIT 1`,
        ).get(caller.userId, account.accountNumber ?? '');
  if (!instrument) return undefined;
  return { beneficiary: getBeneficiaryRow(ctx, instrument.beneficiary_id)!, instrument };
}

// ---- the credit side of a payout ----

/**
 * Rails an instrument can be paid over (interface 2.3 `creditRail`), the default first: a US dollar
 * account with a routing number goes by ACH, a euro IBAN by SEPA, any other bank account by SWIFT, a wallet
 * on its own network (EXTERNAL_WALLET is accepted as a synonym for that network).
 */
export function railsFor(instrument: BeneficiaryInstrumentRow): CreditRail[] {
  if (instrument.type === 'WALLET') return [instrument.network!, 'EXTERNAL_WALLET'];
  if (instrument.country === 'US' && instrument.routing_number !== null && instrument.currency === 'USD') return ['ACH', 'RTP', 'WIRE', 'SWIFT'];
  if (instrument.iban !== null && instrument.currency === 'EUR') return ['SEPA', 'SEPA_INSTANT', 'SWIFT'];
  return ['SWIFT'];
}

/** The rail name the fee schedule (fixtures `fees[].rail`) knows the payment by. */
export function feeRailFor(instrument: BeneficiaryInstrumentRow, rail: CreditRail): string {
  return rail === 'EXTERNAL_WALLET' ? instrument.network! : rail;
}

/**
 * The transaction's `creditRail` (interface 2.4): `<COUNTRY>.<CURRENCY>.<RAIL>` for banks, `<NETWORK>.<TOKEN>`
 * on-chain. SEPA is one scheme for the euro area, written `EU.EUR.SEPA` as on deposit instructions
 * (deposit-instructions/rails.ts); a wire is `US.USD.FEDWIRE`.
 */
export function creditRailTypeFor(instrument: BeneficiaryInstrumentRow, rail: CreditRail): string {
  if (instrument.type === 'WALLET') return `${instrument.network}.${instrument.currency}`;
  if (rail === 'SEPA' || rail === 'SEPA_INSTANT') return `EU.EUR.${rail}`;
  const railName = rail === 'WIRE' ? 'FEDWIRE' : rail;
  return `${instrument.country}.${instrument.currency}.${railName}`;
}

/** Interface 2.5 instrument for the credit side. */
export function creditInstrumentFor(instrument: BeneficiaryInstrumentRow): Instrument {
  if (instrument.type === 'WALLET') {
    return {
      instrumentType: 'EXTERNAL_WALLET',
      externalWallet: {
        id: instrument.id,
        displayName: instrumentDisplayName(instrument),
        currency: instrument.currency,
        network: instrument.network!,
        address: instrument.address!,
      },
    };
  }
  return {
    instrumentType: 'BANK_ACCOUNT',
    bankAccount: {
      id: instrument.id,
      displayName: instrumentDisplayName(instrument),
      currency: instrument.currency,
      mask: maskOf(bankAccountNumberOf(instrument)),
    },
  };
}

/** Interface 2.5 BENEFICIARY party: the beneficiary's id and name under `business` or `person`. */
export function creditPartyFor(beneficiary: BeneficiaryRow): Party {
  const who = { id: beneficiary.id, name: beneficiaryName(beneficiary) };
  return beneficiary.type === 'BUSINESS'
    ? { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'BUSINESS', business: who } }
    : { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'PERSON', person: who } };
}

// ---- fixtures ----

/**
 * Seeds `programmes[].beneficiaries` (fixtures/default.json). Each entry is a creation request
 * (docs/money-out.md#beneficiaries) plus `id`, `userId`, `createdAt`, optional `counterpartyId` (default `cp_` + the
 * id's suffix) and an `id` per instrument; it passes the same validation as POST /v1/beneficiaries.
 */
export function seedFixtureBeneficiaries(ctx: AppContext, programme: ProgrammeFixture): void {
  const userIds = new Set(programme.users.map((user) => user.id));
  programme.beneficiaries.forEach((entry, index) => {
    const where = `programmes[${programme.id}].beneficiaries.${index}`;
    if (!userIds.has(entry.userId)) throw new FixturesError(`invalid fixtures at ${where}: unknown user ${entry.userId}`);
    // The request body is the entry without its fixture-only keys (the body refuses unknown fields).
    const { id: _id, userId: _userId, counterpartyId: _counterpartyId, createdAt: _createdAt, instruments, ...rest } = entry;
    const body = { ...rest, instruments: instruments.map(({ id: _instrumentId, ...instrument }) => instrument) };
    const parsed = createBeneficiaryBody.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new FixturesError(`invalid fixtures at ${where}.${issue.path.join('.')}: ${issue.message}`);
    }
    const problems = beneficiaryProblems(ctx, parsed.data);
    if (problems.length > 0) throw new FixturesError(`invalid fixtures at ${where}: ${problems[0]!.message}`);
    insertBeneficiary(ctx, programme.id, entry.userId, parsed.data, {
      id: entry.id,
      counterpartyId: entry.counterpartyId ?? `cp_${entry.id.slice('ben_'.length)}`,
      instrumentIds: entry.instruments.map((instrument) => instrument.id),
      createdAt: entry.createdAt,
    });
  });
}
