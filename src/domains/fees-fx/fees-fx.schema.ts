import { z } from 'zod';

// Rails a payout can be paid over (interface 2.3 `creditRail`) and the shapes of a quote. The fee schedule
// and the FX rates themselves come from the fixtures (fixtures/default.json `fees` and `fx`).

// interface 2.3: the values of `creditRail`
export const CREDIT_RAILS = ['WIRE', 'ACH', 'RTP', 'SEPA', 'SEPA_INSTANT', 'SWIFT', 'EXTERNAL_WALLET', 'ETHEREUM', 'BASE', 'POLYGON'] as const;
export type CreditRail = (typeof CREDIT_RAILS)[number];

export const creditRailSchema = z.enum(CREDIT_RAILS, {
  error: `creditRail must be one of ${CREDIT_RAILS.join(', ')}`,
});

/**
 * Networks a wallet instrument can live on (docs/decisions.md#stablecoin-addresses: the sandbox's stablecoin networks).
 */
export const WALLET_NETWORKS = ['ETHEREUM', 'BASE', 'POLYGON'] as const;
export type WalletNetwork = (typeof WALLET_NETWORKS)[number];

/**
 * Rates are computed exactly as rationals and then rounded half up to this many decimals for storage,
 * display and conversion (README "Fees and FX").
 */
export const RATE_SCALE = 10;

export interface QuotedFee {
  type: string;
  label: string;
  amountMinor: bigint;
  /** Always the debit currency: fees are charged on the debit side (docs/decisions.md#fees). */
  currency: string;
}

export interface Quote {
  /** Total debit: principal plus fees, in the debit currency. */
  debitAmountMinor: bigint;
  /** The debit net of fees (interface 2.4 `netDebitAmount`): what is converted and sent. */
  principalMinor: bigint;
  creditAmountMinor: bigint;
  fees: QuotedFee[];
  /** Applied rate: credit currency units per debit currency unit, mid x (1 - spread). */
  exchangeRate: string;
  /** The mid rate before spread (`baseExchangeRate`, docs/decisions.md#fx-rates). */
  baseExchangeRate: string;
  /** The spread as a fraction (50 basis points = "0.005"); "0" when no conversion happens. */
  fxSpread: string;
}
