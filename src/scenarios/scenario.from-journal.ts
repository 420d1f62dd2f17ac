import { stringify } from 'yaml';

// A scenario skeleton from a recorded request journal (docs/scenarios.md#from-a-request-journal-to-a-scenario): each
// journal entry of GET /_emulator/requests becomes one step, mapped field by field as that section's table says, and an
// id an earlier answer gave is replaced by a reference to a capture of that answer, so the skeleton replays against a
// fresh sandbox. What it cannot know (which checks matter, captions) is left for the author: every step gets the
// recorded status as its check and a caption naming the call.

/** One entry of GET /_emulator/requests, as far as the skeleton reads it (docs/test-kit.md#request-journal). */
export interface JournalEntry {
  method: string;
  path: string;
  query?: string | null;
  status: number;
  userId?: string | null;
  authMode?: string | null;
  requestHeaders?: Record<string, unknown> | null;
  requestBody?: unknown;
  responseBody?: unknown;
}

export interface SkeletonOptions {
  name: string;
  /** The path of schemas/scenario.schema.json from where the file will be saved. */
  schemaPath?: string;
  /** The programme's MULTI_USER key: calls signed with it and no user are `as: programme`. */
  programmeKey?: string;
}

/** Ids the API hands out: a prefix and the seeded suffix (docs/architecture.md#clock-and-ids). */
const ID = /^(usr|acct|txn|ti|ben|bi|di|ir|enr|flt|sf|msg)_[a-z0-9]{8,32}$/;
const ID_ANYWHERE = /\b(?:usr|acct|txn|ti|ben|bi|di|ir|enr|flt|sf|msg)_[a-z0-9]{8,32}\b/g;
const PAYOUT = /^\/v1\/payout-origination\//;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Producer {
  path: string;
  name: string;
}

/** Every id that is a whole string value of a JSON answer, with its dotted path (first occurrence wins). */
function idsIn(value: unknown, path: string, found: Map<string, string>): void {
  if (typeof value === 'string') {
    if (ID.test(value) && !found.has(value)) found.set(value, path);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => idsIn(item, path ? `${path}.${index}` : String(index), found));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) if (/^[A-Za-z0-9_-]+$/.test(key)) idsIn(item, path ? `${path}.${key}` : key, found);
  }
}

/** A payout's Base64 body decoded: the JSON payload as an object, a pacs.008 as its XML text; null when it is neither. */
function decodePayout(body: unknown): Json | null {
  if (typeof body !== 'string') return null;
  const text = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (text.trimStart().startsWith('<')) return text;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return null;
  }
}

function header(entry: JournalEntry, name: string): string | undefined {
  const value = entry.requestHeaders?.[name];
  return typeof value === 'string' && value !== '[REDACTED]' ? value : undefined;
}

/** The steps of a journal, in order. */
export function stepsFromJournal(entries: readonly JournalEntry[], options: Pick<SkeletonOptions, 'programmeKey'> = {}): Array<Record<string, unknown>> {
  const programmeKey = options.programmeKey ?? 'pk_sandbox_multi';
  const producers = new Map<string, Producer>();
  const counters = new Map<string, number>();
  const steps: Array<Record<string, unknown>> = [];
  const captures: Array<Record<string, string>> = [];

  // an id is captured only where a later step uses it: a first pass finds the last use of each
  const lastUse = new Map<string, number>();
  entries.forEach((entry, index) => {
    const text = `${entry.path}?${entry.query ?? ''} ${JSON.stringify(entry.requestBody ?? null)} ${entry.userId ?? ''} ${JSON.stringify(decodePayout(entry.requestBody))}`;
    for (const id of text.match(ID_ANYWHERE) ?? []) lastUse.set(id, index);
  });

  const refer = (text: string): string => text.replace(ID_ANYWHERE, (id) => (producers.has(id) ? `\${${producers.get(id)!.name}}` : id));
  const referAll = (value: unknown): unknown => {
    if (typeof value === 'string') return refer(value);
    if (Array.isArray(value)) return value.map(referAll);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, referAll(item)]));
    return value;
  };

  entries.forEach((entry, index) => {
    const step = stepOf(entry, programmeKey, refer, referAll);
    if (!step) return;
    steps.push(step);
    const capture: Record<string, string> = {};
    captures.push(capture);
    // ids this answer gave that a later entry uses: captured, and referred to from then on
    const found = new Map<string, string>();
    idsIn(entry.responseBody, 'body', found);
    for (const [id, path] of found) {
      if (producers.has(id) || (lastUse.get(id) ?? -1) <= index) continue;
      const prefix = id.slice(0, id.indexOf('_'));
      const count = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, count);
      const name = `${prefix}${count}`;
      producers.set(id, { path, name });
      capture[name] = path;
    }
  });
  steps.forEach((step, index) => {
    if (Object.keys(captures[index]!).length > 0) {
      const { expect, ...rest } = step;
      steps[index] = { ...rest, capture: captures[index], ...(expect ? { expect } : {}) };
    }
  });
  return steps;
}

function stepOf(entry: JournalEntry, programmeKey: string, refer: (text: string) => string, referAll: (value: unknown) => unknown): Record<string, unknown> | null {
  const method = entry.method.toUpperCase();
  const query = entry.query ? `?${entry.query.replace(/^\?/, '')}` : '';
  const path = entry.path;
  const body = entry.requestBody;
  const expect = { status: entry.status };
  if (path.startsWith('/v1/')) {
    const request: Record<string, unknown> = { method, path: refer(path + query) };
    const key = header(entry, 'x-service-api-key');
    const user = header(entry, 'x-service-user-id') ?? (entry.userId && key === programmeKey ? entry.userId : undefined);
    if (user) request.as = key && key !== programmeKey ? { key, user: refer(user) } : { user: refer(user) };
    else if (key && key !== programmeKey) request.as = { key };
    else request.as = 'programme';
    const idempotencyKey = header(entry, 'idempotency-key');
    if (PAYOUT.test(path)) {
      const decoded = decodePayout(body);
      if (decoded !== null) request.base64 = referAll(decoded);
      else if (typeof body === 'string') request.raw = body;
    } else if (body !== undefined && body !== null && body !== '') {
      request.body = referAll(body);
    }
    if (idempotencyKey) request.idempotencyKey = idempotencyKey;
    const status = (entry.responseBody as { status?: unknown } | null)?.status;
    return {
      caption: `${method} ${path}${query}`.slice(0, 200),
      request,
      expect: typeof status === 'string' ? { ...expect, body: { status } } : expect,
    };
  }
  if (!path.startsWith('/_emulator/') || method === 'GET' || path.startsWith('/_emulator/sessions') || path.startsWith('/_emulator/requests') || path.startsWith('/_emulator/ui')) {
    return null;
  }
  const record = body !== null && typeof body === 'object' && !Array.isArray(body) ? (referAll(body) as Record<string, unknown>) : {};
  const target = /^\/_emulator\/(transactions|information-requests)\/([^/]+)\/(status|return|decision)$/.exec(path);
  if (path === '/_emulator/clock' && typeof record.advanceMs === 'number') return { caption: `${record.advanceMs} ms of emulated time pass`, advance: `${record.advanceMs}ms` };
  if (path === '/_emulator/settle') return { caption: 'Everything due now runs', settle: true };
  if (path === '/_emulator/faults' && method === 'POST') return { caption: 'A fault rule', fault: record, expect };
  if (path === '/_emulator/webhooks/chaos' && method === 'PUT') return { caption: 'Webhook chaos', chaos: record, expect };
  if (path === '/_emulator/webhooks/chaos' && method === 'DELETE') return { caption: 'Webhook chaos off', chaos: 'off' };
  if (path === '/_emulator/snapshots' && method === 'POST' && typeof record.name === 'string') return { caption: `Snapshot ${record.name}`, snapshot: record.name, expect };
  if (target && method === 'POST') {
    const id = refer(decodeURIComponent(target[2]!));
    if (target[3] === 'status') return { caption: `${id} forced to ${String(record.status)}`, force: { transaction: id, ...record }, expect };
    if (target[3] === 'return') return { caption: `${id} returned by the bank`, return: { transaction: id, ...record }, expect };
    return { caption: `Information request ${id} decided`, decide: { informationRequest: id, ...record }, expect };
  }
  return { caption: `${method} ${path}`, control: { method, path: refer(path + query), ...(body === undefined || body === null ? {} : { body: record }) }, expect };
}

/** The skeleton as YAML text, with the schema line. */
export function scenarioFromJournal(entries: readonly JournalEntry[], options: SkeletonOptions): string {
  const steps = stepsFromJournal(entries, options);
  const scenario = {
    name: options.name,
    description: 'Recorded from a request journal (GET /_emulator/requests): check the captions and what each step expects',
    seed: options.name,
    clock: '2026-03-01T12:00:00Z',
    steps: steps.length > 0 ? steps : [{ caption: 'The journal held no API call', settle: true }],
  };
  const schema = options.schemaPath ?? '../schemas/scenario.schema.json';
  return `# yaml-language-server: $schema=${schema}\n${stringify(scenario, { lineWidth: 0 })}`;
}
