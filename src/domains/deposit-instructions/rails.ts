// Rails a deposit instruction can use (interface 2.2: rail.type is `<COUNTRY>.<CURRENCY>.<RAIL>` for fiat;
// contract 3: `<NETWORK>.USDC` for stablecoin addresses).

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
