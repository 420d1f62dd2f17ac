import { createContext, Script, type Context } from 'node:vm';

// The checks of `expect` (docs/decisions.md#scenario-matchers): a plain value is deep equality; an object whose one key
// is a matcher name is that matcher. Numbers and decimal strings compare exactly (as decimals, never as floats). A
// `matches` pattern comes from the file: it runs in a separate V8 context with a time bound shared by all the patterns
// of a step, so a pathological pattern, or many slow ones, fail the step instead of holding the event loop
// (docs/decisions.md#scenario-limits).

export const MATCHER_NAMES = ['equals', 'matches', 'gt', 'gte', 'lt', 'lte', 'exists', 'contains'] as const;
export type MatcherName = (typeof MATCHER_NAMES)[number];
const MATCHER_SET = new Set<string>(MATCHER_NAMES);

/** The time all the `matches` patterns of one step share (docs/scenarios.md#matchers): one pattern may take all of it. */
export const REGEX_BUDGET_MS = 100;
/** The most `matches` one step may hold (docs/scenarios.md#matchers), checked when the file is read. */
export const MATCHES_PER_STEP = 50;

/** The matcher in an expected value, or null when the value is compared for equality. */
export function matcherOf(expected: unknown): { name: MatcherName; argument: unknown } | null {
  if (expected === null || typeof expected !== 'object' || Array.isArray(expected)) return null;
  const keys = Object.keys(expected);
  if (keys.length !== 1 || !MATCHER_SET.has(keys[0]!)) return null;
  return { name: keys[0] as MatcherName, argument: (expected as Record<string, unknown>)[keys[0]!] };
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, index) => deepEqual(item, other[index]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((key) => Object.prototype.hasOwnProperty.call(right, key) && deepEqual(left[key], right[key]));
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/** An exact decimal as a scaled bigint, or null when the value is not a plain number or decimal string. */
function decimalOf(value: unknown): { units: bigint; scale: number } | null {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    text = Number.isInteger(value) ? value.toFixed(0) : String(value);
  } else if (typeof value === 'string') {
    text = value.trim();
  } else {
    return null;
  }
  const match = DECIMAL.exec(text);
  if (!match || text.length > 60) return null;
  const fraction = match[3] ?? '';
  const units = BigInt(`${match[2]}${fraction}`) * (match[1] === '-' ? -1n : 1n);
  return { units, scale: fraction.length };
}

/** -1, 0 or 1; null when either side is not a number. */
export function compareDecimals(a: unknown, b: unknown): number | null {
  const left = decimalOf(a);
  const right = decimalOf(b);
  if (!left || !right) return null;
  const scale = Math.max(left.scale, right.scale);
  const l = left.units * 10n ** BigInt(scale - left.scale);
  const r = right.units * 10n ** BigInt(scale - right.scale);
  return l < r ? -1 : l > r ? 1 : 0;
}

/**
 * Where `matches` runs: one context, and one time budget, for every pattern of a step (a played step's engine steps
 * share one: docs/sessions.md#playing-a-scenario). 'timeout': this pattern ran out the budget and took most of it
 * alone; 'budget': the step's patterns together did (this one may not have run at all).
 */
export class RegexRunner {
  private context: Context | null = null;
  private spentMs = 0;
  private readonly script = new Script('new RegExp(pattern, "u").test(subject)');

  test(pattern: string, subject: string): boolean | 'timeout' | 'budget' {
    const remainingMs = REGEX_BUDGET_MS - this.spentMs;
    if (remainingMs < 1) return 'budget';
    this.context ??= createContext({ pattern: '', subject: '' });
    this.context.pattern = pattern;
    this.context.subject = subject;
    const started = performance.now();
    try {
      const matched = this.script.runInContext(this.context, { timeout: Math.floor(remainingMs) }) === true;
      this.spentMs += performance.now() - started;
      return matched;
    } catch {
      // the time bound, or a pattern the loader let through that this engine cannot compile: the budget is spent
      this.context = null;
      this.spentMs = REGEX_BUDGET_MS;
      return remainingMs > REGEX_BUDGET_MS / 2 ? 'timeout' : 'budget';
    }
  }
}

export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/**
 * Check one actual value (`found`: whether the path exists) against an expected value or matcher. Returns null when it
 * holds, else what was wrong, in a sentence that names the expectation and what was there.
 */
export function check(found: boolean, actual: unknown, expected: unknown, regex: RegexRunner): string | null {
  const matcher = matcherOf(expected);
  if (!matcher) {
    if (!found) return `expected ${show(expected)}, found nothing there`;
    return deepEqual(actual, expected) ? null : `expected ${show(expected)}, found ${show(actual)}`;
  }
  const { name, argument } = matcher;
  if (name === 'exists') return found === argument ? null : argument ? 'expected it to exist, found nothing there' : `expected nothing there, found ${show(actual)}`;
  if (!found) return `expected { ${name}: ${show(argument)} }, found nothing there`;
  switch (name) {
    case 'equals':
      return deepEqual(actual, argument) ? null : `expected ${show(argument)}, found ${show(actual)}`;
    case 'matches': {
      // docs/scenarios.md#matchers: a text or a number, never a whole object or list, whose JSON text would match a
      // word in any field of any item
      if (typeof actual !== 'string' && typeof actual !== 'number' && typeof actual !== 'boolean') {
        return `matches takes a text or a number, found ${actual === null ? 'null' : Array.isArray(actual) ? 'a list' : 'an object'} (${show(actual)}): give the dotted path to one field, such as data.0.status`;
      }
      const subject = String(actual);
      const result = regex.test(String(argument), subject);
      if (result === 'timeout') return `the pattern /${String(argument)}/ took longer than ${REGEX_BUDGET_MS} ms on ${show(actual)}: simplify it`;
      if (result === 'budget') return `the step's matches patterns took longer than ${REGEX_BUDGET_MS} ms together (the time ran out at /${String(argument)}/ on ${show(actual)}): simplify them or spread them over steps`;
      return result ? null : `expected a match of /${String(argument)}/, found ${show(actual)}`;
    }
    case 'contains':
      if (typeof actual === 'string') return typeof argument === 'string' && actual.includes(argument) ? null : `expected text containing ${show(argument)}, found ${show(actual)}`;
      if (Array.isArray(actual)) return actual.some((item) => deepEqual(item, argument)) ? null : `expected a list containing ${show(argument)}, found ${show(actual)}`;
      return `expected a string or a list containing ${show(argument)}, found ${show(actual)}`;
    default: {
      const order = compareDecimals(actual, argument);
      if (order === null) return `expected a number ${name} ${show(argument)}, found ${show(actual)}`;
      const holds = name === 'gt' ? order > 0 : name === 'gte' ? order >= 0 : name === 'lt' ? order < 0 : order <= 0;
      return holds ? null : `expected a number ${name} ${show(argument)}, found ${show(actual)}`;
    }
  }
}
