import { z } from 'zod';
import { instant, calendarDate, emailAddress } from '../../http/formats.js';
import { pageQuery } from '../../http/pagination.js';
import { WALLET_NETWORKS } from '../fees-fx/fees-fx.schema.js';
import { BIC_FORMAT, E164_FORMAT, EVM_ADDRESS_FORMAT, ISO_COUNTRY_LIST, isIsoCountry, maskOf } from './bank-validation.js';

// Beneficiaries (docs/money-out.md#beneficiaries, interface 2.12, 4.14, 4.15): the request body, the resource, its
// instruments, and the row -> API mapping. Field-level format rules live here (so they appear in the OpenAPI document);
// rules that need other fields or the fixtures (US routing, IBAN checksum and country, currency list, the
// non-US address rule) live in beneficiaries.service.ts.

export const RELATIONSHIPS = ['SELF', 'THIRD_PARTY'] as const;

const countryCode = (field: string) =>
  z
    .string({ error: `${field} must be an ISO 3166-1 alpha-2 country code such as "US" or "DE"` })
    .regex(/^[A-Z]{2}$/, { message: `${field} must be an ISO 3166-1 alpha-2 country code: two upper-case letters such as "US" or "DE"`, abort: true })
    .refine(isIsoCountry, { message: `${field} is not an assigned ISO 3166-1 alpha-2 country code` })
    // the server's list, stated in the document (docs/openapi.md#rules-between-fields): "AA" matches the pattern only
    .meta({ enum: [...ISO_COUNTRY_LIST] });

const currencyCode = z
  .string({ error: 'currency must be a currency code such as "USD" or "USDC"' })
  .regex(/^[A-Z][A-Z0-9_]{2,15}$/, 'currency must be an upper-case ISO 4217 code such as "USD", or a token code such as "USDC"');

const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'dateOfBirth must be a date YYYY-MM-DD', abort: true })
  .refine((value) => {
    const parsed = new Date(`${value}T00:00:00.000Z`);
    return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(value);
  }, 'dateOfBirth is not a calendar date')
  .meta({ format: 'date' });

const text = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string of 1-${max} characters` })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`);

export const addressInput = z.strictObject({
  line1: text('address.line1', 140),
  line2: text('address.line2', 140).optional(),
  city: text('address.city', 100),
  region: text('address.region', 100).optional(),
  postalCode: text('address.postalCode', 20),
  country: countryCode('address.country'),
});
export type AddressInput = z.infer<typeof addressInput>;

export const bankAccountInstrumentInput = z.strictObject({
  type: z.literal('BANK_ACCOUNT'),
  currency: currencyCode,
  country: countryCode('country'),
  accountHolderName: text('accountHolderName', 140),
  accountNumber: z
    .string()
    .regex(/^[A-Za-z0-9]{1,34}$/, 'accountNumber must be 1-34 letters or digits (US: 4-17 digits), without spaces')
    .optional()
    .describe('Required unless iban is given. US accounts: 4-17 digits'),
  routingNumber: z
    .string()
    .regex(/^\d{9}$/, 'routingNumber must be a 9-digit ABA routing number')
    .optional()
    .describe('ABA routing number; required for US bank accounts, checksum validated'),
  iban: z
    .string()
    .regex(/^[A-Za-z0-9 ]{15,42}$/, 'iban must be 15-34 letters and digits (groups of four separated by spaces are accepted)')
    .optional()
    .describe('ISO 13616 IBAN, mod-97 validated; its country prefix must equal `country`'),
  bic: z
    .string()
    .regex(BIC_FORMAT, 'bic must be a BIC of 8 or 11 upper-case characters such as "DEUTDEFF" or "DEUTDEFF500"')
    .optional(),
});

export const walletInstrumentInput = z.strictObject({
  type: z.literal('WALLET'),
  network: z.enum(WALLET_NETWORKS, { error: `network must be one of ${WALLET_NETWORKS.join(', ')}` }),
  address: z.string({ error: 'address must be a string' }).regex(EVM_ADDRESS_FORMAT, 'address must be an EVM address: 0x followed by 40 hex characters'),
  currency: currencyCode,
});

export const instrumentInput = z.discriminatedUnion('type', [bankAccountInstrumentInput, walletInstrumentInput]);
export type InstrumentInput = z.infer<typeof instrumentInput>;
export type BankAccountInstrumentInput = z.infer<typeof bankAccountInstrumentInput>;

const commonFields = {
  displayName: text('displayName', 140).optional(),
  email: emailAddress().optional(),
  phoneNumber: z
    .string()
    .regex(E164_FORMAT, 'phoneNumber must be E.164: "+", country code and number, digits only, at most 15 digits (e.g. +14155550123)')
    .optional(),
  address: addressInput.optional().describe('Required (line1, city, postalCode, country) when a bank instrument is outside the US'),
  relationshipToUser: z.enum(RELATIONSHIPS, { error: `relationshipToUser must be one of ${RELATIONSHIPS.join(', ')}` }).optional(),
  instruments: z
    .array(instrumentInput, { error: 'instruments must be an array of 1-10 instruments' })
    .min(1, 'instruments must hold at least 1 instrument')
    .max(10, 'instruments must hold at most 10 instruments'),
};

export const createBeneficiaryBody = z
  .discriminatedUnion('type', [
    // Unknown fields are a 400 naming them (docs/decisions.md#unknown-body-fields).
    z.strictObject({
      type: z.literal('PERSON'),
      firstName: text('firstName', 100),
      lastName: text('lastName', 100),
      dateOfBirth: isoDate.optional(),
      ...commonFields,
    }),
    z.strictObject({
      type: z.literal('BUSINESS'),
      businessName: text('businessName', 200),
      registrationNumber: text('registrationNumber', 100).optional(),
      ...commonFields,
    }),
  ])
  .meta({ id: 'CreateBeneficiaryRequest', description: 'A beneficiary and its instruments' });
export type CreateBeneficiaryInput = z.infer<typeof createBeneficiaryBody>;

// ---- resource ----

export const beneficiaryAddressSchema = z
  .object({
    line1: z.string(),
    line2: z.string().nullable(),
    city: z.string(),
    region: z.string().nullable(),
    postalCode: z.string(),
    country: z.string(),
  })
  .meta({ id: 'BeneficiaryAddress' });
export type BeneficiaryAddress = z.infer<typeof beneficiaryAddressSchema>;

export const beneficiaryInstrumentSchema = z
  .discriminatedUnion('type', [
    z.object({
      id: z.string(),
      type: z.literal('BANK_ACCOUNT'),
      displayName: z.string(),
      currency: z.string(),
      country: z.string(),
      accountHolderName: z.string(),
      mask: z.string().describe('Last 4 characters of the account number or IBAN; the full number is never returned'),
      accountNumberType: z.enum(['IBAN', 'ACCOUNT_NUMBER']),
      routingNumber: z.string().nullable(),
      bic: z.string().nullable(),
      createdAt: instant(),
    }),
    z.object({
      id: z.string(),
      type: z.literal('WALLET'),
      displayName: z.string(),
      currency: z.string(),
      network: z.enum(WALLET_NETWORKS),
      address: z.string(),
      createdAt: instant(),
    }),
  ])
  .meta({ id: 'BeneficiaryInstrument' });
export type BeneficiaryInstrument = z.infer<typeof beneficiaryInstrumentSchema>;

export const beneficiarySchema = z
  .object({
    id: z.string(),
    counterpartyId: z.string(),
    createdAt: instant(),
    updatedAt: instant(),
    type: z.enum(['PERSON', 'BUSINESS']),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    dateOfBirth: calendarDate().nullable(),
    displayName: z.string().nullable(),
    email: z.string().nullable(),
    phoneNumber: z.string().nullable(),
    address: beneficiaryAddressSchema.nullable(),
    relationshipToUser: z.enum(RELATIONSHIPS).nullable(),
    businessName: z.string().optional().describe('BUSINESS beneficiaries only'),
    registrationNumber: z.string().nullable().optional().describe('BUSINESS beneficiaries only'),
    instruments: z.array(beneficiaryInstrumentSchema),
  })
  .meta({ id: 'Beneficiary', description: 'Interface 2.12; a BUSINESS beneficiary adds businessName and registrationNumber' });
export type Beneficiary = z.infer<typeof beneficiarySchema>;

export const instrumentsResponseSchema = z.object({ instruments: z.array(beneficiaryInstrumentSchema) }).meta({ id: 'BeneficiaryInstruments' });

export const listBeneficiariesQuery = z.object(pageQuery(100));
export const beneficiaryParams = z.object({ beneficiaryId: z.string().min(1).max(128) });

// ---- rows ----

export interface BeneficiaryRow {
  id: string;
  programme_id: string;
  user_id: string;
  counterparty_id: string;
  type: 'PERSON' | 'BUSINESS';
  first_name: string | null;
  last_name: string | null;
  date_of_birth: string | null;
  business_name: string | null;
  registration_number: string | null;
  display_name: string | null;
  email: string | null;
  phone_number: string | null;
  address: string | null;
  relationship_to_user: (typeof RELATIONSHIPS)[number] | null;
  created_at: string;
  created_at_ms: number;
  updated_at: string;
}

export interface BeneficiaryInstrumentRow {
  id: string;
  beneficiary_id: string;
  position: number;
  type: 'BANK_ACCOUNT' | 'WALLET';
  currency: string;
  country: string | null;
  account_holder_name: string | null;
  account_number: string | null;
  routing_number: string | null;
  iban: string | null;
  bic: string | null;
  network: (typeof WALLET_NETWORKS)[number] | null;
  address: string | null;
  created_at: string;
}

/** The name a beneficiary goes by in parties and ledger descriptions. */
export function beneficiaryName(row: BeneficiaryRow): string {
  return row.type === 'BUSINESS' ? (row.business_name ?? '') : `${row.first_name ?? ''} ${row.last_name ?? ''}`.trim();
}

/** The number a bank instrument is paid to (and masked from): the IBAN when there is one. */
export function bankAccountNumberOf(row: BeneficiaryInstrumentRow): string {
  return row.iban ?? row.account_number ?? '';
}

export function instrumentDisplayName(row: BeneficiaryInstrumentRow): string {
  if (row.type === 'WALLET') {
    const address = row.address ?? '';
    return `${row.network} wallet ${address.slice(0, 6)}...${address.slice(-4)}`;
  }
  return `${row.account_holder_name} ...${maskOf(bankAccountNumberOf(row))}`;
}

export function toBeneficiaryInstrument(row: BeneficiaryInstrumentRow): BeneficiaryInstrument {
  if (row.type === 'WALLET') {
    return {
      id: row.id,
      type: 'WALLET',
      displayName: instrumentDisplayName(row),
      currency: row.currency,
      network: row.network!,
      address: row.address!,
      createdAt: row.created_at,
    };
  }
  return {
    id: row.id,
    type: 'BANK_ACCOUNT',
    displayName: instrumentDisplayName(row),
    currency: row.currency,
    country: row.country!,
    accountHolderName: row.account_holder_name!,
    mask: maskOf(bankAccountNumberOf(row)),
    accountNumberType: row.iban !== null ? 'IBAN' : 'ACCOUNT_NUMBER',
    routingNumber: row.routing_number,
    bic: row.bic,
    createdAt: row.created_at,
  };
}

/** Row -> API (interface 2.12). Nullable fields are present as null (docs/decisions.md#nulls-rest-vs-webhook). */
export function toBeneficiary(row: BeneficiaryRow, instruments: BeneficiaryInstrumentRow[]): Beneficiary {
  const beneficiary: Beneficiary = {
    id: row.id,
    counterpartyId: row.counterparty_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    type: row.type,
    firstName: row.first_name,
    lastName: row.last_name,
    dateOfBirth: row.date_of_birth,
    displayName: row.display_name,
    email: row.email,
    phoneNumber: row.phone_number,
    address: row.address === null ? null : (JSON.parse(row.address) as BeneficiaryAddress),
    relationshipToUser: row.relationship_to_user,
    instruments: instruments.map(toBeneficiaryInstrument),
  };
  if (row.type === 'BUSINESS') {
    beneficiary.businessName = row.business_name ?? '';
    beneficiary.registrationNumber = row.registration_number;
  }
  return beneficiary;
}
