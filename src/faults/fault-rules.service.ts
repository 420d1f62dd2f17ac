import { DEFAULT_SEED } from '../config.js';
import type { AppContext } from '../context.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import { errors } from '../core/errors.js';
import { seededRandom, type SeededRandom } from '../lib/seeded-random.js';
import { MAX_FAULT_RULES, type CreateFaultRuleInput, type FaultEffect, type FaultRule, type FiredFault } from './fault-rules.schema.js';

// Fault rules on API requests (docs/faults.md#fault-rules): kept in memory per sandbox (the root and each session
// have their own: a runtime slot, docs/architecture.md#runtime), in the order they were added; reset renews them
// (docs/faults.md#lifetime).

interface RuleState {
  view: FaultRule;
  random: SeededRandom;
  pathPattern: PathPattern | null;
}

interface FaultBook {
  rules: RuleState[];
  nextNumber: number;
}

/** A new sandbox, and every reset, has no rules and numbers from flt_1 (docs/faults.md#lifetime); snapshots leave them. */
export const faultRulesSlot: StateSlot<FaultBook> = {
  name: 'faults.rules',
  create: () => ({ rules: [], nextNumber: 1 }),
  reset: 'renew',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

function bookOf(ctx: AppContext): FaultBook {
  return ctx.runtime.get(faultRulesSlot);
}

export function addFaultRule(ctx: AppContext, input: CreateFaultRuleInput): FaultRule {
  const book = bookOf(ctx);
  if (book.rules.length >= MAX_FAULT_RULES) {
    throw errors.conflict(`A sandbox holds at most ${MAX_FAULT_RULES} fault rules; delete some (DELETE /_emulator/faults clears them all)`);
  }
  const id = `flt_${book.nextNumber++}`;
  // docs/faults.md#seeds: the default seed is the server's seed and the rule's id, so the same rules added in the
  // same order draw the same faults on every run.
  const seed = input.seed ?? `${ctx.config.seed ?? DEFAULT_SEED}:${id}`;
  const view: FaultRule = {
    id,
    match: input.match.method === undefined ? input.match : { ...input.match, method: input.match.method.toUpperCase() },
    effect: input.effect,
    times: input.times ?? null,
    probability: input.probability ?? null,
    seed,
    matched: 0,
    fired: 0,
    remaining: input.times ?? null,
    active: true,
    createdAt: new Date(ctx.clock.realNowMs()).toISOString(),
  };
  book.rules.push({ view, random: seededRandom(seed), pathPattern: input.match.path ? pathPattern(input.match.path) : null });
  return { ...view };
}

export function listFaultRules(ctx: AppContext): FaultRule[] {
  return bookOf(ctx).rules.map((rule) => ({ ...rule.view }));
}

export function getFaultRule(ctx: AppContext, id: string): FaultRule {
  return { ...ruleOf(ctx, id).view };
}

export function deleteFaultRule(ctx: AppContext, id: string): void {
  const book = bookOf(ctx);
  const rule = ruleOf(ctx, id);
  book.rules.splice(book.rules.indexOf(rule), 1);
}

/** DELETE /_emulator/faults: every rule goes; ids keep counting, so a journal entry never names two rules. */
export function clearFaultRules(ctx: AppContext): void {
  bookOf(ctx).rules.length = 0;
}

/** True when some rule may still fire: the per-request cost without rules is this one lookup. */
export function hasActiveFaultRules(ctx: AppContext): boolean {
  return bookOf(ctx).rules.some((rule) => rule.view.active);
}

function ruleOf(ctx: AppContext, id: string): RuleState {
  const rule = bookOf(ctx).rules.find((candidate) => candidate.view.id === id);
  if (!rule) throw errors.notFound(`No fault rule ${id.length > 64 ? `${id.slice(0, 64)}...` : id} in this sandbox (GET /_emulator/faults lists them)`);
  return rule;
}

/** What a rule is matched against: the request after authentication and validation. */
export interface RequestFacts {
  method: string;
  /** Path without the query string, as the sandbox routes it (a session's prefix taken off). */
  path: string;
  userId: string | null;
  body: unknown;
  rawBody: string | Buffer | undefined;
}

export interface FaultDecision {
  /** Real milliseconds to wait before going on (every latency rule that fired, added up). */
  latencyMs: number;
  /** The first status, drop or ambiguous effect that fired; null: the request is processed as usual. */
  terminal: { ruleId: string; effect: Exclude<FaultEffect, { type: 'latency' }> } | null;
  /** What fired, for the journal (docs/faults.md#in-the-journal). */
  fired: FiredFault[];
}

/**
 * Evaluate the active rules in the order they were added: each that matches counts the match and draws; latency
 * effects add up, and the first status, drop or ambiguous effect that fires ends the evaluation
 * (docs/faults.md#how-rules-are-evaluated).
 */
export function decideFaults(ctx: AppContext, facts: RequestFacts): FaultDecision | null {
  const book = bookOf(ctx);
  const decision: FaultDecision = { latencyMs: 0, terminal: null, fired: [] };
  const texts = bodyTextsOf(facts);
  for (const rule of book.rules) {
    if (!rule.view.active || !matches(rule, facts, texts)) continue;
    if (!fires(rule)) continue;
    const effect = rule.view.effect;
    if (effect.type === 'latency') {
      const ms = effect.ms ?? rule.random.between(effect.minMs!, effect.maxMs!);
      decision.latencyMs += ms;
      decision.fired.push({ ruleId: rule.view.id, type: 'latency', detail: `${ms} ms added` });
      continue;
    }
    decision.terminal = { ruleId: rule.view.id, effect };
    decision.fired.push({ ruleId: rule.view.id, type: effect.type, detail: terminalDetail(effect) });
    break;
  }
  return decision.fired.length > 0 ? decision : null;
}

function fires(rule: RuleState): boolean {
  const view = rule.view;
  view.matched += 1;
  // docs/faults.md#seeds: a draw for every match, so the sequence does not depend on earlier outcomes
  const drawn = view.probability === null ? true : rule.random.chance(view.probability);
  if (!drawn) return false;
  view.fired += 1;
  if (view.remaining !== null) {
    view.remaining -= 1;
    if (view.remaining === 0) view.active = false;
  }
  return true;
}

function terminalDetail(effect: Exclude<FaultEffect, { type: 'latency' }>): string {
  switch (effect.type) {
    case 'status':
      return `${effect.status} answered before processing`;
    case 'drop':
      return 'connection closed before processing';
    case 'ambiguous':
      return effect.status === undefined ? 'processed and committed, then the connection was closed' : `processed and committed, then ${effect.status} answered`;
  }
}

function matches(rule: RuleState, facts: RequestFacts, texts: BodyTexts): boolean {
  const match = rule.view.match;
  if (match.method !== undefined && match.method !== facts.method) return false;
  if (rule.pathPattern && !rule.pathPattern.test(facts.path)) return false;
  if (match.userId !== undefined && match.userId !== facts.userId) return false;
  if (match.body !== undefined && !bodyHas(facts.body, match.body)) return false;
  if (match.bodyContains !== undefined && !bodyContains(texts, match.bodyContains)) return false;
  return true;
}

/** A compiled `match.path`: whether a path matches it. */
export interface PathPattern {
  test(path: string): boolean;
}

// The steps of a compiled pattern: a character, exactly one character but "/", then any run of characters but "/"
// (the rest of a "*", which takes one or more), any run of characters at all ("**").
const ONE_NOT_SLASH = -1;
const RUN_NOT_SLASH = -2;
const RUN_ANY = -3;

/**
 * docs/faults.md#fault-rules: "/v1/intents/*\/commit" matches "/v1/intents/int_1/commit"; `*` takes one or more
 * characters of one segment, `**` any run of segments. Trailing slashes are ignored, as the router ignores them.
 *
 * Matched by walking every state of the pattern at once over the path's characters (a Thompson simulation), so the
 * time is at most the pattern's length times the path's, whatever the pattern: a regular expression built from it
 * backtracked without end on a run of `**` before a character the path lacks, and held the event loop for good.
 */
export function pathPattern(pattern: string): PathPattern {
  const steps: number[] = [];
  for (const part of pattern.replace(/\/+$/, '').split(/(\*\*|\*)/)) {
    if (part === '**') {
      if (steps.at(-1) !== RUN_ANY) steps.push(RUN_ANY); // a run of them is one
    } else if (part === '*') steps.push(ONE_NOT_SLASH, RUN_NOT_SLASH);
    else for (let index = 0; index < part.length; index += 1) steps.push(part.charCodeAt(index));
  }
  const accept = steps.length;
  const runs = (state: number) => state < accept && (steps[state] === RUN_NOT_SLASH || steps[state] === RUN_ANY);
  const matches = (path: string): boolean => {
    let current = new Int32Array(accept + 1);
    let next = new Int32Array(accept + 1);
    const seen = new Int32Array(accept + 1).fill(-1);
    let currentCount = 0;
    // a state and every state a run lets it skip to, once per position
    const add = (list: Int32Array, count: number, state: number, position: number): number => {
      let at = state;
      while (seen[at] !== position) {
        seen[at] = position;
        list[count++] = at;
        if (!runs(at)) break;
        at += 1;
      }
      return count;
    };
    currentCount = add(current, 0, 0, 0);
    for (let position = 0; position < path.length && currentCount > 0; position += 1) {
      const code = path.charCodeAt(position);
      let nextCount = 0;
      for (let index = 0; index < currentCount; index += 1) {
        const state = current[index]!;
        if (state === accept) continue;
        const step = steps[state]!;
        if (step === RUN_ANY || (step === RUN_NOT_SLASH && code !== 47)) nextCount = add(next, nextCount, state, position + 1);
        else if (step === code || (step === ONE_NOT_SLASH && code !== 47)) nextCount = add(next, nextCount, state + 1, position + 1);
      }
      [current, next] = [next, current];
      currentCount = nextCount;
    }
    for (let index = 0; index < currentCount; index += 1) if (current[index] === accept) return true;
    return false;
  };
  return { test: (path) => matches(path) || (path.endsWith('/') && matches(path.slice(0, -1))) };
}

function bodyHas(body: unknown, fields: Record<string, unknown>): boolean {
  if (body === null || typeof body !== 'object') return false;
  for (const [path, expected] of Object.entries(fields)) {
    if (!sameJson(valueAt(body, path), expected)) return false;
  }
  return true;
}

function valueAt(body: object, path: string): unknown {
  if (Object.prototype.hasOwnProperty.call(body, path)) return (body as Record<string, unknown>)[path];
  let value: unknown = body;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/**
 * The texts `match.bodyContains` searches, made at most once per request and only when a rule asks (docs/faults.md#fault-rules):
 * made again for every rule, 100 rules cost a 1 MiB body 1.4 s of the event loop (the text decoded, the Base64 test and
 * decoding repeated per rule); now a rule costs one search of each text at most, and none when an earlier rule searched
 * for the same text.
 */
interface BodyTexts {
  /** The body's text; undefined: the request has no body. */
  plain(): string | undefined;
  /** The body decoded from Base64 (the payout endpoint's text body); undefined: the text is not Base64. */
  decoded(): string | undefined;
  /** Answers already found, by searched text: rules that search the same text scan the body once. */
  found: Map<string, boolean>;
}

function bodyTextsOf(facts: RequestFacts): BodyTexts {
  let plain: string | undefined | null = null;
  let decoded: string | undefined | null = null;
  const texts: BodyTexts = {
    plain() {
      if (plain === null) {
        const raw = facts.rawBody ?? (typeof facts.body === 'string' ? facts.body : facts.body === undefined ? undefined : JSON.stringify(facts.body));
        plain = raw === undefined ? undefined : typeof raw === 'string' ? raw : raw.toString('utf8');
      }
      return plain;
    },
    decoded() {
      if (decoded === null) {
        const compact = texts.plain()?.trim();
        // the payout endpoint's body is Base64 text (docs/payouts.md): look inside it too
        decoded = compact !== undefined && /^[A-Za-z0-9+/\s]+=*$/.test(compact) ? Buffer.from(compact, 'base64').toString('utf8') : undefined;
      }
      return decoded;
    },
    found: new Map(),
  };
  return texts;
}

function bodyContains(texts: BodyTexts, text: string): boolean {
  const known = texts.found.get(text);
  if (known !== undefined) return known;
  const plain = texts.plain();
  const found = plain !== undefined && (plain.includes(text) || (texts.decoded()?.includes(text) ?? false));
  texts.found.set(text, found);
  return found;
}
