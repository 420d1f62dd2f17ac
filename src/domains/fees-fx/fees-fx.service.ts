import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { errors } from '../../core/errors.js';
import { convertMinor, divideRounded, MoneyFormatError, parseAmount, parseDecimal } from '../../lib/money.js';
import { RATE_SCALE, type Quote, type QuotedFee } from './fees-fx.schema.js';

// Fee schedule and FX quoting for money out (docs/money-out.md#fees-and-fx). Everything is exact: fixture rates are
// read as rationals, inverses and crosses (via USD) stay rational, and only three things are rounded, each half
// up: a rate to RATE_SCALE decimals, a fee to the debit currency's minor unit, and a converted amount to
// its currency's minor unit. Amounts are converted with the rounded, displayed `exchangeRate`, so a client
// can reproduce every figure from the response.

interface Rational {
  num: bigint;
  den: bigint;
}

const ONE: Rational = { num: 1n, den: 1n };
const PIVOT = 'USD';

function rationalOf(value: string): Rational {
  const decimal = parseDecimal(value);
  return { num: decimal.units, den: 10n ** BigInt(decimal.scale) };
}

function multiply(a: Rational, b: Rational): Rational {
  return { num: a.num * b.num, den: a.den * b.den };
}

/** A fixture pair `FROM/TO` (1 FROM = rate TO), or the inverse of `TO/FROM`. */
function pairRate(ctx: AppContext, from: string, to: string): Rational | null {
  const rates = ctx.fixtures.fx.midRates;
  const direct = rates[`${from}/${to}`];
  if (direct !== undefined) return rationalOf(direct);
  const inverse = rates[`${to}/${from}`];
  if (inverse !== undefined) {
    const rate = rationalOf(inverse);
    if (rate.num === 0n) return null;
    return { num: rate.den, den: rate.num };
  }
  return null;
}

/** The exact mid rate (units of `to` per unit of `from`), or null when the fixtures cannot derive it. */
export function midRate(ctx: AppContext, from: string, to: string): Rational | null {
  if (from === to) return ONE;
  const direct = pairRate(ctx, from, to);
  if (direct) return direct;
  if (from === PIVOT || to === PIVOT) return null;
  const toPivot = pairRate(ctx, from, PIVOT);
  const fromPivot = pairRate(ctx, PIVOT, to);
  return toPivot && fromPivot ? multiply(toPivot, fromPivot) : null;
}

/** Round a rational half up to RATE_SCALE decimals, as scaled units. */
function rateUnits(rate: Rational): bigint {
  return divideRounded(rate.num * 10n ** BigInt(RATE_SCALE), rate.den);
}

/** A decimal string without trailing zeros ("0.9154", "1", "1.0869565217"). */
export function formatRate(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * A request amount in minor units (docs/decisions.md#exact-money): a plain decimal with at most the currency's decimals
 * (else 400 InvalidFormat) and greater than zero (else InvalidValue), reported on `fieldRef`.
 */
/**
 * The largest amount, in minor units, the emulator accepts or computes: far above any real payment, and
 * far enough below SQLite's 64-bit integers that conversions and sums cannot overflow.
 */
export const MAX_AMOUNT_MINOR = 10n ** 15n;

function assertWithinLimit(minor: bigint, fieldRef: string): void {
  if (minor > MAX_AMOUNT_MINOR) {
    throw errors.field('InvalidValue', fieldRef, `${fieldRef} is too large: the sandbox accepts at most ${MAX_AMOUNT_MINOR} minor units per movement`);
  }
}

export function parsePositiveAmount(ctx: AppContext, value: string, currency: string, fieldRef: string): bigint {
  const precision = precisionOf(ctx, currency, fieldRef);
  let minor: bigint;
  try {
    minor = parseAmount(value, precision);
  } catch (error) {
    if (error instanceof MoneyFormatError) throw errors.field('InvalidFormat', fieldRef, `${fieldRef}: ${error.message} (${currency})`);
    throw error;
  }
  if (minor <= 0n) throw errors.field('InvalidValue', fieldRef, `${fieldRef} must be greater than zero`);
  assertWithinLimit(minor, fieldRef);
  return minor;
}

export interface QuoteInput {
  debitCurrency: string;
  creditCurrency: string;
  /** Fee rail (a fixture `fees[].rail`), or null for a book transfer between own accounts (no fee). */
  feeRail: string | null;
  /** The amount the caller fixed: the total debit (fees included) or the amount to credit. */
  amount: { side: 'DEBIT' | 'CREDIT'; minor: bigint };
  /** Field names for errors, so the caller's own vocabulary comes back (e.g. `debitAmount`). */
  fieldRefs: { amount: string; currency: string };
}

export function quote(ctx: AppContext, input: QuoteInput): Quote {
  const { debitCurrency, creditCurrency, fieldRefs } = input;
  const debitPrecision = precisionOf(ctx, debitCurrency);
  const creditPrecision = precisionOf(ctx, creditCurrency, fieldRefs.currency);
  const mid = midRate(ctx, debitCurrency, creditCurrency);
  if (!mid) {
    throw errors.field(
      'InvalidValue',
      fieldRefs.currency,
      `No FX rate from ${debitCurrency} to ${creditCurrency}; rates are quoted between currencies paired with ${PIVOT} in the fixtures (${Object.keys(ctx.fixtures.fx.midRates).join(', ')})`,
    );
  }
  const converting = debitCurrency !== creditCurrency;
  const spreadBasisPoints = converting ? BigInt(ctx.fixtures.fx.spreadBasisPoints) : 0n;
  const baseUnits = rateUnits(mid);
  const appliedUnits = rateUnits(multiply(mid, { num: 10_000n - spreadBasisPoints, den: 10_000n }));
  if (appliedUnits <= 0n) throw errors.field('InvalidValue', fieldRefs.currency, `The ${debitCurrency}/${creditCurrency} rate rounds to zero`);
  const applied = { units: appliedUnits, scale: RATE_SCALE };

  const rules = input.feeRail === null ? [] : ctx.fixtures.fees.filter((rule) => rule.rail === input.feeRail);
  const fixedParts = rules.map((rule) => fixedFeeInDebitCurrency(ctx, rule.fixed, rule.currency, debitCurrency, debitPrecision, fieldRefs.currency));
  const feesOn = (principal: bigint): QuotedFee[] =>
    rules
      .map((rule, index) => ({
        type: rule.type,
        label: rule.label,
        amountMinor: fixedParts[index]! + divideRounded(principal * BigInt(rule.basisPoints), 10_000n),
        currency: debitCurrency,
      }))
      .filter((fee) => fee.amountMinor > 0n);
  const sum = (fees: QuotedFee[]) => fees.reduce((total, fee) => total + fee.amountMinor, 0n);

  let principalMinor: bigint;
  let fees: QuotedFee[];
  let creditAmountMinor: bigint;
  if (input.amount.side === 'DEBIT') {
    // The caller fixed the total debit: find the principal whose fees fill the rest. Fees are computed on
    // an estimate of the principal; the principal is then exactly the debit minus those fees.
    const fixedTotal = fixedParts.reduce((total, part) => total + part, 0n);
    const basisPointsTotal = BigInt(rules.reduce((total, rule) => total + rule.basisPoints, 0));
    const estimate = divideRounded((input.amount.minor - fixedTotal) * 10_000n, 10_000n + basisPointsTotal);
    fees = estimate > 0n ? feesOn(estimate) : [];
    principalMinor = input.amount.minor - sum(fees);
    if (estimate <= 0n || principalMinor <= 0n) {
      throw errors.field('InvalidValue', fieldRefs.amount, `${fieldRefs.amount} must be larger than the fees of the ${input.feeRail} rail`);
    }
    creditAmountMinor = convertMinor(principalMinor, debitPrecision, applied, creditPrecision);
    // When the credit currency's unit is finer than what one debit unit buys (1 US cent buys 1.5 JPY), several
    // credit amounts are priced at this principal: credit the largest, so that a creditAmount priced to
    // this debit comes back from it (1000 JPY -> 31.65 USD -> 1000 JPY, not 999;
    // docs/decisions.md#amounts-both-directions).
    const most = largestCreditPricedAt(principalMinor, appliedUnits, debitPrecision, creditPrecision);
    if (most !== null) creditAmountMinor = most;
    if (creditAmountMinor <= 0n) {
      throw errors.field('InvalidValue', fieldRefs.amount, `${fieldRefs.amount} is too small: it converts to zero ${creditCurrency}`);
    }
  } else {
    creditAmountMinor = input.amount.minor;
    // principal = credit / rate, in the debit currency's minor units, rounded half up
    principalMinor = principalOf(creditAmountMinor, appliedUnits, debitPrecision, creditPrecision);
    if (principalMinor <= 0n) {
      throw errors.field('InvalidValue', fieldRefs.amount, `${fieldRefs.amount} is too small: it costs less than the smallest ${debitCurrency} unit`);
    }
    fees = feesOn(principalMinor);
  }

  assertWithinLimit(principalMinor + sum(fees), fieldRefs.amount);
  assertWithinLimit(creditAmountMinor, fieldRefs.amount);
  return {
    debitAmountMinor: principalMinor + sum(fees),
    principalMinor,
    creditAmountMinor,
    fees,
    exchangeRate: formatRate(appliedUnits, RATE_SCALE),
    baseExchangeRate: formatRate(baseUnits, RATE_SCALE),
    fxSpread: formatRate(spreadBasisPoints, 4),
  };
}

/** The principal (debit minor units) a credit amount is priced at: credit / rate, rounded half up. */
function principalOf(creditMinor: bigint, appliedUnits: bigint, debitPrecision: number, creditPrecision: number): bigint {
  return divideRounded(creditMinor * 10n ** BigInt(debitPrecision + RATE_SCALE), appliedUnits * 10n ** BigInt(creditPrecision));
}

/**
 * The largest credit amount whose price (principalOf) is exactly `principalMinor`, or null when none is (the
 * credit unit is coarser than the debit unit there). With r the rate in credit minor units per debit minor
 * unit, principalOf(c) = P exactly when c < (P + 1/2) r, so the largest is ceil((2P + 1) r / 2) - 1.
 */
function largestCreditPricedAt(principalMinor: bigint, appliedUnits: bigint, debitPrecision: number, creditPrecision: number): bigint | null {
  const numerator = (2n * principalMinor + 1n) * appliedUnits * 10n ** BigInt(creditPrecision);
  const denominator = 2n * 10n ** BigInt(debitPrecision + RATE_SCALE);
  const candidate = (numerator - 1n) / denominator;
  return candidate > 0n && principalOf(candidate, appliedUnits, debitPrecision, creditPrecision) === principalMinor ? candidate : null;
}

/** A fee's fixed part, set in the rule's currency, converted to the debit currency at the mid rate (no spread). */
function fixedFeeInDebitCurrency(
  ctx: AppContext,
  fixed: string,
  ruleCurrency: string,
  debitCurrency: string,
  debitPrecision: number,
  fieldRef: string,
): bigint {
  const rulePrecision = precisionOf(ctx, ruleCurrency);
  const fixedMinor = parseAmount(fixed, rulePrecision);
  if (fixedMinor === 0n) return 0n;
  const mid = midRate(ctx, ruleCurrency, debitCurrency);
  if (!mid) {
    throw errors.field('InvalidValue', fieldRef, `The fee schedule charges in ${ruleCurrency}, which has no FX rate to the debit currency ${debitCurrency}`);
  }
  return divideRounded(fixedMinor * mid.num * 10n ** BigInt(debitPrecision), mid.den * 10n ** BigInt(rulePrecision));
}
