// Field checks for beneficiary data (docs/decisions.md#beneficiary-validation): ISO 3166-1 alpha-2 countries, IBAN (ISO
// 13616 mod-97), ABA routing numbers (3-7-1 weighted checksum), E.164 phone numbers and EVM addresses. Pure functions,
// shared by the request schema and the fixture seeder so both apply the same rules.

// ISO 3166-1 alpha-2: the 249 officially assigned codes.
export const ISO_COUNTRY_CODES: ReadonlySet<string> = new Set(
  `AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ
   BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
   CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ
   DE DJ DK DM DO DZ
   EC EE EG EH ER ES ET
   FI FJ FK FM FO FR
   GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY
   HK HM HN HR HT HU
   ID IE IL IM IN IO IQ IR IS IT
   JE JM JO JP
   KE KG KH KI KM KN KP KR KW KY KZ
   LA LB LC LI LK LR LS LT LU LV LY
   MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ
   NA NC NE NF NG NI NL NO NP NR NU NZ
   OM
   PA PE PF PG PH PK PL PM PN PR PS PT PW PY
   QA
   RE RO RS RU RW
   SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ
   TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ
   UA UG UM US UY UZ
   VA VC VE VG VI VN VU
   WF WS
   YE YT
   ZA ZM ZW`.split(/\s+/),
);

/** The same codes in order: the closed set the OpenAPI document states for a beneficiary's country. */
export const ISO_COUNTRY_LIST: readonly string[] = [...ISO_COUNTRY_CODES].filter((code) => code.length === 2).sort();

export function isIsoCountry(code: string): boolean {
  return ISO_COUNTRY_CODES.has(code);
}

/** IBANs may be written in groups of four ("DE89 3704 ..."); stored and checked without spaces. */
export function normalizeIban(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

export const IBAN_FORMAT = /^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/;

/** ISO 13616: move the first four characters to the end, letters to 10..35, the number mod 97 must be 1. */
export function ibanChecksumValid(iban: string): boolean {
  if (!IBAN_FORMAT.test(iban)) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' && char <= 'Z' ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** ABA routing number: 9 digits with 3*(d1+d4+d7) + 7*(d2+d5+d8) + (d3+d6+d9) divisible by 10. */
export function abaRoutingValid(routingNumber: string): boolean {
  if (!/^\d{9}$/.test(routingNumber)) return false;
  const d = [...routingNumber].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}

export const E164_FORMAT = /^\+[1-9]\d{1,14}$/;
export const EVM_ADDRESS_FORMAT = /^0x[0-9a-fA-F]{40}$/;
export const BIC_FORMAT = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/;

/** The last four characters, which is all the API ever shows of an account number or IBAN. */
export function maskOf(accountNumber: string): string {
  return accountNumber.slice(-4);
}

/**
 * Sandbox test value (docs/money-out.md#magic-values): a bank account number the emulated downstream
 * account verification cannot verify. It passes every local check, then creation answers 400 with an
 * `UnexpectedVerificationError` on that field (interface 7.2), as when the real verification step fails.
 */
export const VERIFICATION_FAILURE_ACCOUNT_NUMBER = '9999999999';
