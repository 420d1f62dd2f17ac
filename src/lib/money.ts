// Money is exact (docs/decisions.md#exact-money): integer minor units as bigint, never JS floats. Decimal strings are
// parsed and formatted here and nowhere else.

export class MoneyFormatError extends Error {
  override name = 'MoneyFormatError';
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * Parse a request amount into minor units. Rejects signs, exponents, non-numbers and more decimals than
 * the currency allows (docs/decisions.md#exact-money: 400 InvalidFormat).
 */
export function parseAmount(value: string, precision: number): bigint {
  const match = DECIMAL.exec(value);
  if (!match) throw new MoneyFormatError(`"${value}" is not a plain decimal amount (digits, optional point and decimals; no sign or exponent)`);
  const whole = match[1]!;
  const fraction = match[2] ?? '';
  if (fraction.length > precision) {
    throw new MoneyFormatError(`"${value}" has ${fraction.length} decimals; this currency allows at most ${precision}`);
  }
  return BigInt(whole + fraction.padEnd(precision, '0'));
}

/** Format minor units with exactly `precision` decimals. */
export function formatAmount(minor: bigint, precision: number): string {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(precision + 1, '0');
  const whole = digits.slice(0, digits.length - precision);
  const fraction = digits.slice(digits.length - precision);
  return (negative ? '-' : '') + (precision > 0 ? `${whole}.${fraction}` : whole);
}

/** Round half up (away from zero for positives) a rational a/b to an integer. */
export function divideRounded(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  const negative = numerator < 0n;
  const abs = negative ? -numerator : numerator;
  const quotient = (abs * 2n + denominator) / (denominator * 2n);
  return negative ? -quotient : quotient;
}

/**
 * Exact decimal rates as a scaled integer: `rate = units / 10^scale`. Rates in responses keep their stored
 * precision (interface 2.4: base exchange rate at full stored precision).
 */
export interface Decimal {
  units: bigint;
  scale: number;
}

export function parseDecimal(value: string): Decimal {
  const match = DECIMAL.exec(value);
  if (!match) throw new MoneyFormatError(`"${value}" is not a plain decimal number`);
  const fraction = match[2] ?? '';
  return { units: BigInt(match[1]! + fraction), scale: fraction.length };
}

/** Multiply minor units by a decimal rate and convert between precisions, rounding half up. */
export function convertMinor(minor: bigint, fromPrecision: number, rate: Decimal, toPrecision: number): bigint {
  // minor / 10^from * rate.units / 10^scale * 10^to
  const numerator = minor * rate.units * 10n ** BigInt(toPrecision);
  const denominator = 10n ** BigInt(fromPrecision + rate.scale);
  return divideRounded(numerator, denominator);
}
