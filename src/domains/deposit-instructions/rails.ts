// Rails a deposit instruction can use (interface 2.2: rail.type is `<COUNTRY>.<CURRENCY>.<RAIL>` for fiat;
// docs/decisions.md#stablecoin-addresses: `<NETWORK>.USDC` for stablecoin addresses).

export interface RailDefinition {
  type: string;
  label: string;
  kind: 'FIAT' | 'STABLECOIN';
  currency: string;
  country?: string;
  network?: string;
  /** Institution shown on the instruction (the sandbox's partner bank). */
  institutionName?: string;
  /** Whether the rail carries remittance text (wire, SWIFT: interface 2.4 debitMemo). */
  carriesMemo: boolean;
}

export const RAILS: Record<string, RailDefinition> = {
  'US.USD.ACH': { type: 'US.USD.ACH', label: 'ACH', kind: 'FIAT', currency: 'USD', country: 'US', institutionName: 'Sandbox Community Bank', carriesMemo: false },
  'US.USD.FEDWIRE': { type: 'US.USD.FEDWIRE', label: 'Fedwire', kind: 'FIAT', currency: 'USD', country: 'US', institutionName: 'Sandbox Community Bank', carriesMemo: true },
  'EU.EUR.SEPA': { type: 'EU.EUR.SEPA', label: 'SEPA Credit Transfer', kind: 'FIAT', currency: 'EUR', country: 'DE', institutionName: 'Sandbox Europe AG', carriesMemo: true },
  'GB.GBP.FPS': { type: 'GB.GBP.FPS', label: 'Faster Payments', kind: 'FIAT', currency: 'GBP', country: 'GB', institutionName: 'Sandbox UK Ltd', carriesMemo: true },
  'ETHEREUM.USDC': { type: 'ETHEREUM.USDC', label: 'USDC on Ethereum', kind: 'STABLECOIN', currency: 'USDC', network: 'ETHEREUM', carriesMemo: false },
  'BASE.USDC': { type: 'BASE.USDC', label: 'USDC on Base', kind: 'STABLECOIN', currency: 'USDC', network: 'BASE', carriesMemo: false },
  'POLYGON.USDC': { type: 'POLYGON.USDC', label: 'USDC on Polygon', kind: 'STABLECOIN', currency: 'USDC', network: 'POLYGON', carriesMemo: false },
};

/** Token currency of a network sub-balance (interface 2.1: e.g. USDC_ETH on the debit side). */
export const NETWORK_TOKEN_CURRENCY: Record<string, string> = {
  ETHEREUM: 'USDC_ETH',
  BASE: 'USDC_BASE',
  POLYGON: 'USDC_POLYGON',
};

export interface InstructionField {
  key: string;
  label: string;
  value: string;
  copyable: boolean;
}

export interface InstructionDetails {
  accountHolderName: string;
  accountNumber?: string;
  routingNumber?: string;
  iban?: string;
  bic?: string;
  walletAddress?: string;
}

/** The `fields` array of interface 2.2 for a rail. */
export function instructionFields(rail: RailDefinition, details: InstructionDetails): InstructionField[] {
  const field = (key: string, label: string, value: string | undefined, copyable = true): InstructionField[] =>
    value === undefined ? [] : [{ key, label, value, copyable }];
  if (rail.kind === 'STABLECOIN') {
    return [
      ...field('walletAddress', `${rail.network ?? ''} address`.trim(), details.walletAddress),
      ...field('network', 'Network', rail.network, false),
    ];
  }
  if (rail.currency === 'EUR' || rail.currency === 'GBP') {
    return [
      ...field('accountHolderName', 'Account holder', details.accountHolderName),
      ...field('iban', 'IBAN', details.iban),
      ...field('bic', 'BIC', details.bic),
      ...field('institutionName', 'Bank', rail.institutionName, false),
    ];
  }
  return [
    ...field('accountHolderName', 'Account holder', details.accountHolderName),
    ...field('routingNumber', 'Routing number', details.routingNumber),
    ...field('accountNumber', 'Account number', details.accountNumber),
    ...field('institutionName', 'Bank', rail.institutionName, false),
  ];
}

export function instructionDisclosures(rail: RailDefinition): Array<{ kind: string; text: string }> {
  if (rail.kind === 'STABLECOIN') {
    return [{ kind: 'NETWORK_WARNING', text: `Send only USDC on ${rail.network}. Tokens sent on another network are lost.` }];
  }
  return [{ kind: 'SANDBOX', text: `Sandbox ${rail.label} instructions: no real funds move. Simulate a deposit with POST /v1/sandbox/accounts/{accountId}/deposits.` }];
}

// ---------------------------------------------------------------------------------------------------------
// New instructions (docs/decisions.md#instruction-rails): the rail an account gets, and deterministic account details
// drawn from ctx.ids, so the same seed and the same requests give the same numbers and addresses
// (docs/decisions.md#determinism).

/** Networks in the order a stablecoin account is given addresses (README "Deposit instructions"). */
export const STABLECOIN_NETWORKS = Object.keys(NETWORK_TOKEN_CURRENCY);

/** The fiat rail a new instruction of a currency uses: the first rail of that currency in RAILS. */
export function primaryFiatRail(currency: string): RailDefinition | undefined {
  return Object.values(RAILS).find((rail) => rail.kind === 'FIAT' && rail.currency === currency);
}

export function stablecoinRail(network: string): RailDefinition | undefined {
  return Object.values(RAILS).find((rail) => rail.kind === 'STABLECOIN' && rail.network === network);
}

interface DigitSource {
  digits(count: number): string;
  hex(count: number): string;
}

const ABA_WEIGHTS = [3, 7, 1, 3, 7, 1, 3, 7, 1];

/** ABA check: 3/7/1-weighted digit sum is a multiple of 10. */
export function isValidAbaRoutingNumber(value: string): boolean {
  if (!/^\d{9}$/.test(value)) return false;
  return [...value].reduce((sum, digit, i) => sum + Number(digit) * ABA_WEIGHTS[i]!, 0) % 10 === 0;
}

/**
 * A US routing number with a valid check digit. It starts 01-09 (a Federal Reserve district prefix), as
 * routing numbers of ordinary banks do.
 */
export function abaRoutingNumber(ids: DigitSource): string {
  const drawn = ids.digits(7);
  const body = `0${(Number(drawn[0]) % 9) + 1}${drawn.slice(1)}`;
  const sum = [...body].reduce((total, digit, i) => total + Number(digit) * ABA_WEIGHTS[i]!, 0);
  return body + String((10 - (sum % 10)) % 10);
}

/** A 12-digit account number at the sandbox bank (the 40 prefix of the fixture numbers). */
export function usAccountNumber(ids: DigitSource): string {
  return `40${ids.digits(10)}`;
}

/** ISO 13616 mod-97 of an IBAN moved into check position (letters A=10 ... Z=35). */
function ibanRemainder(rearranged: string): number {
  let remainder = 0;
  for (const char of rearranged.toUpperCase()) {
    const value = /[0-9]/.test(char) ? char : String(char.charCodeAt(0) - 55);
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder;
}

export function isValidIban(value: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(value)) return false;
  return ibanRemainder(value.slice(4) + value.slice(0, 4)) === 1;
}

/** An IBAN with correct check digits for a country code and a BBAN. */
export function ibanFor(country: string, bban: string): string {
  const check = 98 - ibanRemainder(`${bban}${country}00`);
  return `${country}${String(check).padStart(2, '0')}${bban}`;
}

/** The sandbox banks behind the fiat rails: the part of an IBAN that names the bank, and its BIC. */
export const SANDBOX_BANKS = {
  EUR: { country: 'DE', bankCode: '37040044', bic: 'SBXEDEFFXXX' },
  GBP: { country: 'GB', bankCode: 'SBXU400000', bic: 'SBXUGB2LXXX' },
} as const;

/** Account details of a new fiat instruction on `rail` (docs/decisions.md#instruction-rails). */
export function newFiatDetails(ids: DigitSource, rail: RailDefinition, accountHolderName: string): InstructionDetails {
  if (rail.currency === 'EUR' || rail.currency === 'GBP') {
    const bank = SANDBOX_BANKS[rail.currency];
    // DE: 8-digit bank code + 10-digit account; GB: 4-letter bank + 6-digit sort code + 8-digit account.
    const accountPart = ids.digits(rail.currency === 'EUR' ? 10 : 8);
    return { accountHolderName, iban: ibanFor(bank.country, bank.bankCode + accountPart), bic: bank.bic };
  }
  return { accountHolderName, routingNumber: abaRoutingNumber(ids), accountNumber: usAccountNumber(ids) };
}

/** A deterministic EVM address (0x + 40 lower-case hex). */
export function newWalletAddress(ids: DigitSource): string {
  return `0x${ids.hex(40)}`;
}
