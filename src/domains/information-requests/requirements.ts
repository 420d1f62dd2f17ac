import type { ValidationError, ValidationErrorType } from '../../core/errors.js';
import { COUNTRY_CODES } from './countries.js';
import { isCalendarDay } from '../../lib/calendar.js';

// The requirement model (docs/onboarding.md#requirements-and-value-formats): what an ENROLLMENT information request
// asks of a PERSON or a BUSINESS user, the precise value format of each requirement, and the rules "checkable from the
// request alone" that make up `validationStatus` (interface 2.9). The interface leaves the requirement shape and
// every value format unshown; the formats below are the emulator's choice and are documented, with
// examples, in docs/onboarding.md#requirements-and-value-formats. Outside-data checks (ALREADY REGISTERED) are not here: they run
// only at submission (information-requests.service.ts).

export const REQUIREMENT_KINDS = ['TEXT', 'DATE', 'ADDRESS', 'TAX_ID', 'PERSON_LIST', 'DOCUMENT'] as const;
export type RequirementKind = (typeof REQUIREMENT_KINDS)[number];

export const REQUIREMENT_STATUSES = ['MISSING', 'VALID', 'INVALID'] as const;
export type RequirementStatus = (typeof REQUIREMENT_STATUSES)[number];
export type ValidationStatus = RequirementStatus;

export const REQUIREMENT_SETS = ['PERSON', 'BUSINESS'] as const;
export type RequirementSet = (typeof REQUIREMENT_SETS)[number];

export const ENTRY_SOURCES = ['CALLER', 'PREFILL'] as const;
export type EntrySource = (typeof ENTRY_SOURCES)[number];

/** An entry as stored: a document's value is its metadata (documents.ts), never its bytes. */
export interface StoredEntry {
  value: unknown;
  source: EntrySource;
  confirmed: boolean;
}

export interface RequirementEvaluation {
  status: RequirementStatus;
  errors: ValidationError[];
}

export interface Evaluation {
  byKey: Record<string, RequirementEvaluation>;
  validationStatus: ValidationStatus;
}

/** Collects validation errors; every fieldRef is a dotted path that starts with the requirement key. */
export class Checker {
  readonly errors: ValidationError[] = [];

  add(type: ValidationErrorType, fieldRef: string, message: string): void {
    this.errors.push({ type, fieldRef, message: `${fieldRef} ${message}` });
  }
}

interface CheckContext {
  /** The emulated date (YYYY-MM-DD, UTC): age and "not in the future" rules read the emulated clock. */
  today: string;
}

export interface RequirementDefinition {
  key: string;
  label: string;
  kind: RequirementKind;
  required: boolean;
  /**
   * Prefilled from the user's name, unconfirmed, when the request is created (docs/decisions.md#prefill-unconfirmed).
   */
  prefillFromName?: true;
  /** Field schema and cross-entry rules of a stored value (documents are checked at write time instead). */
  check(checker: Checker, value: unknown, context: CheckContext): void;
}

export const MAX_BENEFICIAL_OWNERS = 10;
export const MINIMUM_AGE_YEARS = 18;
const EARLIEST_BIRTH_DATE = '1900-01-01';

const PERSON_REQUIREMENTS: readonly RequirementDefinition[] = [
  {
    key: 'legalName',
    label: 'Legal name, as on the identity document',
    kind: 'TEXT',
    required: true,
    prefillFromName: true,
    check: (c, value) => void checkText(c, 'legalName', value, 2, 200),
  },
  {
    key: 'dateOfBirth',
    label: 'Date of birth (YYYY-MM-DD); the person must be 18 or older',
    kind: 'DATE',
    required: true,
    check: (c, value, { today }) => {
      const date = checkPastDate(c, 'dateOfBirth', value, today);
      if (date === undefined) return;
      const age = ageOn(date, today);
      if (age < MINIMUM_AGE_YEARS) {
        c.add('InvalidValue', 'dateOfBirth', `makes the person ${age} years old on ${today}; the person must be ${MINIMUM_AGE_YEARS} or older`);
      }
    },
  },
  {
    key: 'address',
    label: 'Residential address',
    kind: 'ADDRESS',
    required: true,
    check: (c, value) => checkAddress(c, 'address', value),
  },
  {
    key: 'taxId',
    label: 'Tax identification number { country, number } (US: SSN or ITIN)',
    kind: 'TAX_ID',
    required: true,
    check: (c, value) => checkTaxId(c, 'taxId', value),
  },
  {
    key: 'identityDocument',
    label: 'Identity document (passport, national ID card or driving licence) as a PDF of at most 10 pages',
    kind: 'DOCUMENT',
    required: true,
    check: () => undefined,
  },
];

const BUSINESS_REQUIREMENTS: readonly RequirementDefinition[] = [
  {
    key: 'businessName',
    label: 'Registered business name',
    kind: 'TEXT',
    required: true,
    prefillFromName: true,
    check: (c, value) => void checkText(c, 'businessName', value, 2, 200),
  },
  {
    key: 'registrationNumber',
    label: 'Company registration number',
    kind: 'TEXT',
    required: true,
    check: (c, value) => checkRegistrationNumber(c, 'registrationNumber', value),
  },
  {
    key: 'incorporationCountry',
    label: 'Country of incorporation (ISO 3166-1 alpha-2, such as US)',
    kind: 'TEXT',
    required: true,
    check: (c, value) => void checkCountry(c, 'incorporationCountry', value),
  },
  {
    key: 'address',
    label: 'Registered business address',
    kind: 'ADDRESS',
    required: true,
    check: (c, value) => checkAddress(c, 'address', value),
  },
  {
    key: 'beneficialOwners',
    label: 'Beneficial owners [{ name, dateOfBirth, ownershipPercent }]; the percentages total at most 100',
    kind: 'PERSON_LIST',
    required: true,
    check: (c, value, { today }) => checkBeneficialOwners(c, 'beneficialOwners', value, today),
  },
  {
    key: 'formationDocument',
    label: 'Formation document (certificate of incorporation or equivalent) as a PDF of at most 10 pages',
    kind: 'DOCUMENT',
    required: true,
    check: () => undefined,
  },
];

export const REQUIREMENTS: Readonly<Record<RequirementSet, readonly RequirementDefinition[]>> = {
  PERSON: PERSON_REQUIREMENTS,
  BUSINESS: BUSINESS_REQUIREMENTS,
};

/** Keys whose value is a document, in any requirement set (checked with the PDF reader before a write). */
export const DOCUMENT_KEYS: ReadonlySet<string> = new Set(
  Object.values(REQUIREMENTS)
    .flat()
    .filter((definition) => definition.kind === 'DOCUMENT')
    .map((definition) => definition.key),
);

export function requirementOf(set: RequirementSet, key: string): RequirementDefinition | undefined {
  return REQUIREMENTS[set].find((definition) => definition.key === key);
}

/**
 * The key whose value is the legal or business name (the magic names of docs/decisions.md#review-magic-names read it).
 */
export function nameKeyOf(set: RequirementSet): 'legalName' | 'businessName' {
  return set === 'PERSON' ? 'legalName' : 'businessName';
}

/**
 * Recompute every requirement's status (interface 2.9: on every write). An unconfirmed prefilled value
 * counts as MISSING: the service guessed it from the user's name and the caller has not said it is right.
 */
export function evaluate(set: RequirementSet, entries: ReadonlyMap<string, StoredEntry>, today: string): Evaluation {
  const byKey: Record<string, RequirementEvaluation> = {};
  let anyInvalid = false;
  let anyMissing = false;
  for (const definition of REQUIREMENTS[set]) {
    const entry = entries.get(definition.key);
    let evaluation: RequirementEvaluation;
    if (!entry || !entry.confirmed) {
      evaluation = { status: 'MISSING', errors: [] };
    } else {
      const checker = new Checker();
      definition.check(checker, entry.value, { today });
      evaluation = { status: checker.errors.length > 0 ? 'INVALID' : 'VALID', errors: checker.errors };
    }
    if (evaluation.status === 'INVALID') anyInvalid = true;
    if (evaluation.status === 'MISSING' && definition.required) anyMissing = true;
    byKey[definition.key] = evaluation;
  }
  return { byKey, validationStatus: anyInvalid ? 'INVALID' : anyMissing ? 'MISSING' : 'VALID' };
}

/** Why a request is not VALID, as interface 7.2 items naming each requirement (the submit 400). */
export function submissionErrors(set: RequirementSet, entries: ReadonlyMap<string, StoredEntry>, evaluation: Evaluation): ValidationError[] {
  const out: ValidationError[] = [];
  for (const definition of REQUIREMENTS[set]) {
    const result = evaluation.byKey[definition.key];
    if (!result) continue;
    if (result.status === 'INVALID') out.push(...result.errors);
    if (result.status === 'MISSING' && definition.required) {
      const entry = entries.get(definition.key);
      const message =
        entry && !entry.confirmed
          ? `${definition.key} was prefilled from the user's name and is not confirmed; write it (the same or a corrected value) to confirm it`
          : `${definition.key} is required: ${definition.label}`;
      out.push({ type: 'MissingValue', fieldRef: definition.key, message });
    }
  }
  return out;
}

/** Full years between a birth date and a date, both YYYY-MM-DD (a 29 February birthday falls on 1 March). */
export function ageOn(birthDate: string, today: string): number {
  const [by, bm, bd] = birthDate.split('-').map(Number) as [number, number, number];
  const [ty, tm, td] = today.split('-').map(Number) as [number, number, number];
  const beforeBirthday = tm < bm || (tm === bm && td < bd);
  return ty - by - (beforeBirthday ? 1 : 0);
}

// ---------------------------------------------------------------------------------------------------
// Value formats. Each check reports MissingValue (absent or empty), InvalidFormat (wrong type or shape)
// or InvalidValue (well-formed but not accepted), with fieldRef pointing at the exact part.

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

function checkText(c: Checker, ref: string, value: unknown, min: number, max: number): string | undefined {
  if (isAbsent(value)) return void c.add('MissingValue', ref, 'is required');
  if (typeof value !== 'string') return void c.add('InvalidFormat', ref, 'must be a string');
  const trimmed = value.trim();
  if (trimmed.length === 0) return void c.add('MissingValue', ref, 'must not be empty');
  if (CONTROL_CHARACTERS.test(value)) return void c.add('InvalidFormat', ref, 'must not contain control characters (line breaks, tabs)');
  if (trimmed.length < min) return void c.add('InvalidValue', ref, `must be at least ${min} characters`);
  if (trimmed.length > max) return void c.add('InvalidValue', ref, `must be at most ${max} characters`);
  return trimmed;
}

function checkOptionalText(c: Checker, ref: string, value: unknown, max: number): string | undefined {
  if (isAbsent(value)) return undefined;
  return checkText(c, ref, value, 1, max);
}

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

function checkDate(c: Checker, ref: string, value: unknown): string | undefined {
  if (isAbsent(value)) return void c.add('MissingValue', ref, 'is required');
  if (typeof value !== 'string' || !DATE_PATTERN.test(value)) {
    return void c.add('InvalidFormat', ref, 'must be a date in the form YYYY-MM-DD, such as 1990-04-21');
  }
  const [year, month, day] = value.split('-').map(Number) as [number, number, number];
  if (!isCalendarDay(year, month, day)) {
    return void c.add('InvalidFormat', ref, `is not a calendar date (${value})`);
  }
  return value;
}

function checkPastDate(c: Checker, ref: string, value: unknown, today: string): string | undefined {
  const date = checkDate(c, ref, value);
  if (date === undefined) return undefined;
  if (date > today) return void c.add('InvalidValue', ref, `is in the future (today is ${today})`);
  if (date < EARLIEST_BIRTH_DATE) return void c.add('InvalidValue', ref, `must be on or after ${EARLIEST_BIRTH_DATE}`);
  return date;
}

function checkCountry(c: Checker, ref: string, value: unknown): string | undefined {
  if (isAbsent(value)) return void c.add('MissingValue', ref, 'is required');
  if (typeof value !== 'string' || !/^[A-Z]{2}$/.test(value)) {
    return void c.add('InvalidFormat', ref, 'must be an ISO 3166-1 alpha-2 country code in upper case, such as US, GB or DE');
  }
  if (!COUNTRY_CODES.has(value)) return void c.add('InvalidValue', ref, `is not an assigned ISO 3166-1 alpha-2 country code (${value})`);
  return value;
}

function checkObject(c: Checker, ref: string, value: unknown, accepted: readonly string[]): Record<string, unknown> | undefined {
  if (isAbsent(value)) return void c.add('MissingValue', ref, 'is required');
  if (typeof value !== 'object' || Array.isArray(value)) {
    return void c.add('InvalidFormat', ref, `must be an object with ${accepted.join(', ')}`);
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!accepted.includes(key)) c.add('InvalidValue', `${ref}.${key}`, `is not an accepted field; accepted: ${accepted.join(', ')}`);
  }
  return record;
}

const ADDRESS_FIELDS = ['line1', 'line2', 'city', 'region', 'postalCode', 'country'] as const;
const POSTAL_CODE = /^[A-Za-z0-9][A-Za-z0-9 -]*$/;
const US_ZIP = /^\d{5}(-\d{4})?$/;

/** { line1, line2?, city, region?, postalCode, country }; US addresses need a state code and a ZIP code. */
function checkAddress(c: Checker, ref: string, value: unknown): void {
  const address = checkObject(c, ref, value, ADDRESS_FIELDS);
  if (!address) return;
  checkText(c, `${ref}.line1`, address.line1, 1, 200);
  checkOptionalText(c, `${ref}.line2`, address.line2, 200);
  checkText(c, `${ref}.city`, address.city, 1, 100);
  const region = checkOptionalText(c, `${ref}.region`, address.region, 100);
  const postalCode = checkText(c, `${ref}.postalCode`, address.postalCode, 1, 20);
  if (postalCode !== undefined && !POSTAL_CODE.test(postalCode)) {
    c.add('InvalidFormat', `${ref}.postalCode`, 'may contain only letters, digits, spaces and hyphens');
  }
  const country = checkCountry(c, `${ref}.country`, address.country);
  if (country === 'US') {
    if (isAbsent(address.region)) c.add('MissingValue', `${ref}.region`, 'is required for a US address: the two-letter state code, such as CA');
    else if (region !== undefined && !/^[A-Z]{2}$/.test(region)) c.add('InvalidFormat', `${ref}.region`, 'must be a two-letter US state code in upper case, such as CA');
    if (postalCode !== undefined && POSTAL_CODE.test(postalCode) && !US_ZIP.test(postalCode)) {
      c.add('InvalidFormat', `${ref}.postalCode`, 'must be a US ZIP code: 5 digits or ZIP+4, such as 94105 or 94105-1234');
    }
  }
}

const US_TAX_ID = /^(\d{3})-?(\d{2})-?(\d{4})$/;
const OTHER_TAX_ID = /^[A-Za-z0-9][A-Za-z0-9 ./-]{3,29}$/;

/** { country, number }: US numbers are SSNs or ITINs (9 digits, 123-45-6789); elsewhere 4-30 characters. */
function checkTaxId(c: Checker, ref: string, value: unknown): void {
  const taxId = checkObject(c, ref, value, ['country', 'number']);
  if (!taxId) return;
  const country = checkCountry(c, `${ref}.country`, taxId.country);
  const number = checkText(c, `${ref}.number`, taxId.number, 1, 30);
  if (number === undefined || country === undefined) return;
  if (country === 'US') {
    const match = US_TAX_ID.exec(number);
    if (!match) return void c.add('InvalidFormat', `${ref}.number`, 'must be a US SSN or ITIN: 9 digits, optionally written 123-45-6789');
    const [, area, group, serial] = match;
    if (area === '000' || area === '666' || group === '00' || serial === '0000') {
      c.add('InvalidValue', `${ref}.number`, 'is not an issuable SSN or ITIN (area 000 or 666, group 00 and serial 0000 are never issued)');
    }
  } else if (!OTHER_TAX_ID.test(number) || !/\d/.test(number)) {
    c.add('InvalidFormat', `${ref}.number`, 'must be 4-30 letters, digits, spaces, dots, slashes or hyphens, with at least one digit');
  }
}

const REGISTRATION_NUMBER = /^[A-Za-z0-9][A-Za-z0-9 ./-]*$/;

function checkRegistrationNumber(c: Checker, ref: string, value: unknown): void {
  const number = checkText(c, ref, value, 2, 50);
  if (number === undefined) return;
  if (!REGISTRATION_NUMBER.test(number) || !/\d/.test(number)) {
    c.add('InvalidFormat', ref, 'must be 2-50 letters, digits, spaces, dots, slashes or hyphens, with at least one digit');
  }
}

/** A percentage as a JSON number, > 0 and <= 100, at most two decimals; returned in hundredths. */
function checkPercent(c: Checker, ref: string, value: unknown): number | undefined {
  if (isAbsent(value)) return void c.add('MissingValue', ref, 'is required');
  if (typeof value !== 'number' || !Number.isFinite(value)) return void c.add('InvalidFormat', ref, 'must be a number such as 25 or 12.5');
  const hundredths = Math.round(value * 100);
  if (Math.abs(hundredths - value * 100) > 1e-6) return void c.add('InvalidFormat', ref, 'may have at most two decimals');
  if (hundredths <= 0 || hundredths > 10_000) return void c.add('InvalidValue', ref, 'must be greater than 0 and at most 100');
  return hundredths;
}

/** Each owner's fields, then the cross-entry rule: the ownership percentages total at most 100. */
function checkBeneficialOwners(c: Checker, ref: string, value: unknown, today: string): void {
  if (isAbsent(value)) return void c.add('MissingValue', ref, 'is required');
  if (!Array.isArray(value)) return void c.add('InvalidFormat', ref, 'must be an array of { name, dateOfBirth, ownershipPercent }');
  if (value.length === 0) return void c.add('InvalidValue', ref, 'must list at least one beneficial owner');
  if (value.length > MAX_BENEFICIAL_OWNERS) return void c.add('InvalidValue', ref, `must list at most ${MAX_BENEFICIAL_OWNERS} beneficial owners`);
  const before = c.errors.length;
  let totalHundredths = 0;
  value.forEach((item, index) => {
    const itemRef = `${ref}.${index}`;
    const owner = checkObject(c, itemRef, item, ['name', 'dateOfBirth', 'ownershipPercent']);
    if (!owner) return;
    checkText(c, `${itemRef}.name`, owner.name, 2, 200);
    checkPastDate(c, `${itemRef}.dateOfBirth`, owner.dateOfBirth, today);
    totalHundredths += checkPercent(c, `${itemRef}.ownershipPercent`, owner.ownershipPercent) ?? 0;
  });
  // The total is only meaningful when every owner's own fields are valid.
  if (c.errors.length === before && totalHundredths > 10_000) {
    c.add('InvalidValue', ref, `ownershipPercent values add up to ${totalHundredths / 100}; the total must be at most 100`);
  }
}
