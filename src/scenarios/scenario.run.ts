import { signRequest } from '../lib/hmac.js';
import { checkKeys, keyOf, programmeKey, type KeyBook, type ScenarioKey } from './scenario.keys.js';
import type { LoadedScenario, Position } from './scenario.load.js';
import { check, RegexRunner, show } from './scenario.match.js';
import { onboardingEntries } from './scenario.onboarding.js';
import { parseReference, readPath, REFERENCE, wholeReference } from './scenario.refs.js';
import { DURATION, opensSessions, SESSIONS_CLOSED, type ActionName, type GivenUser, type ScenarioStep } from './scenario.schema.js';
import { TransportError, type ScenarioTransport } from './scenario.transport.js';

// The scenario engine (docs/decisions.md#scenario-engine): `given` built through the API as a client would, then one
// step at a time, each one action, its captures and its checks. The run's state is plain JSON, so a server can keep a
// play's progress between requests and step through a file one request per step. Every /v1 request is signed here, as
// a client signs it (docs/decisions.md#scenario-keys); control-plane actions are ordinary /_emulator calls.

export type { ScenarioTransport } from './scenario.transport.js';

export interface StepAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** The transaction the step made or moved, when the answer names one (a simulated deposit's is in its message). */
  transactionId?: string;
}

/** A run's progress: plain JSON (docs/decisions.md#scenario-engine). */
export interface RunState {
  version: 1;
  keys: KeyBook;
  givenBuilt: boolean;
  /** Every given name: its answer object, with `id` (a user: its userId). */
  given: Record<string, Record<string, unknown>>;
  /** A given user's name -> its user id. */
  users: Record<string, string>;
  captures: Record<string, unknown>;
  /** A step id -> its answer. */
  answers: Record<string, StepAnswer>;
  /** The index of the next step to run. */
  next: number;
  /** A step failed: the run stops there. */
  failed: boolean;
}

export interface StepFailure {
  message: string;
  line: number;
  column: number;
}

export interface StepResult {
  index: number;
  id: string | null;
  caption: string | null;
  note: string | null;
  action: ActionName | 'expect';
  passed: boolean;
  durationMs: number;
  request?: { method: string; path: string; body?: unknown };
  answer?: { status: number; body: unknown };
  failure?: StepFailure;
  /** The transaction the step made or moved, if any (the dashboard's story panel). */
  transactionId?: string;
}

export interface ScenarioResult {
  file: string;
  name: string;
  passed: boolean;
  durationMs: number;
  steps: StepResult[];
  /** The first failure: a step's, or `given`'s (step index -1). */
  failure?: StepFailure & { step: number };
  state: RunState;
}

/** `given` could not be built: the file's line and column of the user it was building. */
export class ScenarioRunError extends Error {
  readonly line: number;
  readonly column: number;
  readonly file: string;
  constructor(file: string, position: Position, message: string) {
    super(message);
    this.name = 'ScenarioRunError';
    this.file = file;
    this.line = position.line;
    this.column = position.column;
  }
}

/** A step failed at a position of the file. */
class Failure extends Error {
  constructor(
    message: string,
    readonly position: Position | null = null,
  ) {
    super(message);
  }
}

// ---- references ----

function lookup(state: RunState, expression: string): unknown {
  const parsed = parseReference(expression);
  if (!parsed) throw new Failure(`\${${expression}} is not a reference`);
  let root: unknown;
  let path = parsed.path;
  if (parsed.root === 'steps') {
    const id = path[0]!;
    root = state.answers[id];
    path = path.slice(1);
    if (root === undefined) throw new Failure(`\${${expression}}: step ${id} has not run`);
  } else if (Object.prototype.hasOwnProperty.call(state.given, parsed.root)) {
    root = state.given[parsed.root];
  } else if (Object.prototype.hasOwnProperty.call(state.captures, parsed.root)) {
    root = state.captures[parsed.root];
  } else {
    throw new Failure(`\${${expression}}: "${parsed.root}" has no value yet`);
  }
  const found = readPath(root, path);
  if (!found.found) {
    const keys = root !== null && typeof root === 'object' ? Object.keys(root).slice(0, 20).join(', ') : show(root);
    const name = parsed.root === 'steps' ? `step ${parsed.path[0]}'s answer` : parsed.root;
    throw new Failure(`\${${expression}}: ${name} has no ${path.join('.')} (it holds ${keys || 'nothing'})`);
  }
  return found.value;
}

function interpolate(text: string, state: RunState): unknown {
  const whole = wholeReference(text);
  if (whole !== null) return lookup(state, whole);
  return text.replace(REFERENCE, (_match, expression: string) => {
    const value = lookup(state, expression);
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/** A value with every reference in its strings (and keys) filled in. */
export function resolve(value: unknown, state: RunState): unknown {
  if (typeof value === 'string') return value.includes('${') ? interpolate(value, state) : value;
  if (Array.isArray(value)) return value.map((item) => resolve(item, state));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.includes('${') ? String(interpolate(key, state)) : key, resolve(item, state)]));
  }
  return value;
}

function resolveText(value: string, state: RunState, what: string): string {
  const resolved = resolve(value, state);
  if (typeof resolved !== 'string' && typeof resolved !== 'number') throw new Failure(`${what} ${value} is ${show(resolved)}, not text`);
  return String(resolved);
}

// ---- calls ----

const PAYOUT_PREFIX = '/v1/payout-origination/';

/** The HMAC headers of a /v1 request (docs/authentication.md; the payout variant: docs/decisions.md#payout-hmac-variant). */
function signedHeaders(key: ScenarioKey, userId: string | null, method: string, target: string, body: string): Record<string, string> {
  const payout = target.includes(PAYOUT_PREFIX);
  // docs/decisions.md#hmac-timestamp: real wall-clock milliseconds; the payout variant takes an RFC 3339 instant
  const timestamp = payout ? new Date().toISOString() : String(Date.now());
  const signature = signRequest({ apiKey: key.apiKey, secret: key.secret, timestamp, method, target, body });
  const headers: Record<string, string> = {
    'x-service-api-key': key.apiKey,
    'x-service-timestamp': timestamp,
    'x-service-program-id': key.programmeId,
    'x-service-signature': payout ? `sha256=${signature}` : signature,
  };
  if (userId !== null && key.integrationType === 'MULTI_USER') headers['x-service-user-id'] = userId;
  return headers;
}

function parseAnswer(text: string, contentType: string | undefined): unknown {
  if (text === '') return null;
  if (contentType?.includes('json')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

interface Exchange {
  request: { method: string; path: string; body?: unknown };
  answer: StepAnswer;
  text: string;
}

async function send(transport: ScenarioTransport, method: string, path: string, headers: Record<string, string>, body: string | undefined): Promise<{ answer: StepAnswer; text: string }> {
  let response;
  try {
    response = await transport.call({ method, path, headers, body });
  } catch (error) {
    throw new Failure(error instanceof TransportError ? error.message : `${method} ${path} could not be sent: ${(error as Error).message}`);
  }
  return { answer: { status: response.status, headers: response.headers, body: parseAnswer(response.body, response.headers['content-type']) }, text: response.body };
}

/** A control-plane call with a JSON body. */
async function control(transport: ScenarioTransport, method: string, path: string, body?: unknown): Promise<Exchange> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = payload === undefined ? {} : { 'content-type': 'application/json' };
  const { answer, text } = await send(transport, method, path, headers, payload);
  return { request: { method, path, ...(body === undefined ? {} : { body }) }, answer, text };
}

/** A signed /v1 call as `key` (for `userId`, or no user). */
async function api(transport: ScenarioTransport, key: ScenarioKey, userId: string | null, method: string, path: string, body?: unknown): Promise<Exchange> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers = signedHeaders(key, userId, method, transport.prefix + path, payload ?? '');
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const { answer, text } = await send(transport, method, path, headers, payload);
  return { request: { method, path, ...(body === undefined ? {} : { body }) }, answer, text };
}

function messageOf(answer: StepAnswer): string {
  const body = answer.body as { message?: unknown } | null;
  return body && typeof body === 'object' && typeof body.message === 'string' ? body.message : show(answer.body);
}

function expectOk(exchange: Exchange, statuses: readonly number[], doing: string): StepAnswer {
  if (statuses.includes(exchange.answer.status)) return exchange.answer;
  throw new Failure(`${doing}: ${exchange.request.method} ${exchange.request.path} answered ${exchange.answer.status}: ${messageOf(exchange.answer)}`);
}

// ---- the run ----

/** A run not started: nothing is sent. Checks every request step's key against `keys` (throws ScenarioFileError). */
export function startRun(loaded: LoadedScenario, keys: KeyBook): RunState {
  checkKeys(loaded, keys);
  return { version: 1, keys, givenBuilt: false, given: {}, users: {}, captures: {}, answers: {}, next: 0, failed: false };
}

const TXN = /\btxn_[A-Za-z0-9]+/;

function transactionOf(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  for (const field of ['transactionId', 'relatedTransactionId']) if (typeof record[field] === 'string') return record[field];
  if (typeof record.id === 'string' && record.id.startsWith('txn_')) return record.id;
  if (typeof record.message === 'string') return TXN.exec(record.message)?.[0];
  return undefined;
}

function clone(state: RunState): RunState {
  return structuredClone(state);
}

async function buildUser(transport: ScenarioTransport, state: RunState, user: GivenUser, multi: ScenarioKey): Promise<void> {
  const created = expectOk(
    await api(transport, multi, null, 'POST', '/v1/auth/users', { externalId: user.externalId ?? user.as, type: user.type, name: user.name, ...(user.email ? { email: user.email } : {}) }),
    [201],
    `creating user ${user.as}`,
  ).body as Record<string, unknown>;
  const userId = String(created.userId);
  state.users[user.as] = userId;
  state.given[user.as] = { id: userId, ...created };
  const enrollment = user.enrollment ?? 'ACTIVE';
  const asUser = (method: string, path: string, body?: unknown) => api(transport, multi, userId, method, path, body);

  if (enrollment !== 'NOT_STARTED') {
    const read = expectOk(await asUser('GET', '/v1/enrollment'), [200], `reading ${user.as}'s enrollment`).body as { informationRequest: { id: string } };
    const requestId = read.informationRequest.id;
    state.given[user.as]!.informationRequestId = requestId;
    if (enrollment !== 'DRAFT') {
      expectOk(await asUser('POST', `/v1/information-requests/${requestId}/entries`, { entries: onboardingEntries(user.type, user.name) }), [200], `filling ${user.as}'s information request`);
      expectOk(await asUser('POST', `/v1/information-requests/${requestId}/submit`), [200], `submitting ${user.as}'s information request`);
      // the submission is processed by a job due now: PROCESSING_SUBMISSION -> PENDING_REVIEW (settle never moves the clock)
      expectOk(await control(transport, 'POST', '/_emulator/settle', {}), [200], 'settling');
      if (enrollment === 'ACTIVE' || enrollment === 'REJECTED') {
        const decision = enrollment === 'ACTIVE' ? 'APPROVED' : 'REJECTED';
        expectOk(await control(transport, 'POST', `/_emulator/information-requests/${requestId}/decision`, { decision }), [200], `deciding ${user.as}'s information request`);
      }
    }
  }
  if (enrollment === 'ACTIVE') await buildAccounts(transport, state, user, multi, userId);
  for (const beneficiary of user.beneficiaries ?? []) {
    const answer = expectOk(await asUser('POST', '/v1/beneficiaries', resolve(beneficiary.body, state)), [201], `creating ${user.as}'s beneficiary ${beneficiary.as}`).body as Record<string, unknown>;
    state.given[beneficiary.as] = answer;
  }
}

async function buildAccounts(transport: ScenarioTransport, state: RunState, user: GivenUser, multi: ScenarioKey, userId: string): Promise<void> {
  const asUser = (method: string, path: string, body?: unknown) => api(transport, multi, userId, method, path, body);
  await providerReady(transport);
  const list = expectOk(await asUser('GET', '/v1/accounts?pageSize=100'), [200], `listing ${user.as}'s accounts`).body as { data: Array<{ id: string; currency: string }> };
  const taken = new Set<string>();
  const named = new Map<string, string>();
  for (const account of user.accounts ?? []) {
    const found = list.data.find((candidate) => candidate.currency === account.currency && !taken.has(candidate.id));
    if (!found) {
      const currencies = list.data.map((candidate) => candidate.currency).join(', ') || 'none';
      throw new Failure(`${user.as}'s activation opened no ${taken.size > 0 ? 'other ' : ''}${account.currency} account (it opened: ${currencies}; the programme's account templates decide)`);
    }
    taken.add(found.id);
    named.set(account.as, found.id);
    if (account.balance !== undefined && !/^0+(\.0+)?$/.test(account.balance)) await fund(transport, asUser, found.id, account.as, account.balance);
    state.given[account.as] = expectOk(await asUser('GET', `/v1/accounts/${found.id}`), [200], `reading ${user.as}'s account ${account.as}`).body as Record<string, unknown>;
  }
  for (const instruction of user.depositInstructions ?? []) {
    const account = state.given[instruction.account] as { id: string; depositInstructions?: Array<{ id: string; rail?: { type?: string } }> };
    const found = (account.depositInstructions ?? []).find((candidate) => candidate.rail?.type === instruction.rail);
    if (!found) {
      const rails = (account.depositInstructions ?? []).map((candidate) => candidate.rail?.type).join(', ') || 'none';
      throw new Failure(`account ${instruction.account} has no ${instruction.rail} deposit instruction (it has: ${rails})`);
    }
    state.given[instruction.as] = found as unknown as Record<string, unknown>;
  }
}

/**
 * The accounts an activation opens get their deposit instructions when the bank (the provider) is ready, a job the
 * fixtures' timeline schedules (docs/onboarding.md#accounts-of-onboarded-users): the clock is advanced to that job's due
 * time, as a client waiting for the instructions would see it, whatever the timeline says.
 */
async function providerReady(transport: ScenarioTransport): Promise<void> {
  const jobs = expectOk(await control(transport, 'GET', '/_emulator/jobs?status=PENDING&type=account.provider-ready&pageSize=200'), [200], 'reading the pending jobs').body as { data: Array<{ dueAt: string }> };
  if (jobs.data.length === 0) return;
  const due = Math.max(...jobs.data.map((job) => Date.parse(job.dueAt)));
  const clock = expectOk(await control(transport, 'GET', '/_emulator/clock'), [200], 'reading the clock').body as { now: string };
  const advanceMs = due - Date.parse(clock.now);
  if (advanceMs > 0) expectOk(await control(transport, 'POST', '/_emulator/clock', { advanceMs }), [200], 'advancing the clock to the provider\'s readiness');
  expectOk(await control(transport, 'POST', '/_emulator/settle', {}), [200], 'settling');
}

/** Fund an account to `balance` with one simulated deposit, walked to COMPLETED at once (no clock movement). */
async function fund(transport: ScenarioTransport, asUser: (method: string, path: string, body?: unknown) => Promise<Exchange>, accountId: string, name: string, balance: string): Promise<void> {
  const detail = expectOk(await asUser('GET', `/v1/accounts/${accountId}`), [200], `reading account ${name}`).body as { depositInstructions: Array<{ id: string }> };
  const deposit = expectOk(
    await asUser('POST', `/v1/sandbox/accounts/${accountId}/deposits`, { depositInstructionId: detail.depositInstructions[0]!.id, amount: balance, counterpartyName: 'Scenario funding', reference: `given-${name}` }),
    [202],
    `funding account ${name}`,
  );
  const transactionId = transactionOf(deposit.body);
  if (!transactionId) throw new Failure(`funding account ${name}: the deposit's answer names no transaction: ${show(deposit.body)}`);
  expectOk(await control(transport, 'POST', `/_emulator/transactions/${transactionId}/status`, { status: 'COMPLETED' }), [200], `completing the deposit that funds ${name}`);
  const after = expectOk(await asUser('GET', `/v1/accounts/${accountId}`), [200], `reading account ${name}`).body as { balances: { available: string } };
  if (after.balances.available !== balance) {
    // a fee or an opening balance from the fixtures would make it differ: say so rather than run on a wrong balance
    throw new Failure(`account ${name} holds ${after.balances.available} after its funding deposit, not ${balance}`);
  }
}

/**
 * Build the file's `given` through the API (docs/decisions.md#scenario-given). Throws ScenarioRunError with the line and
 * column of the user being built when a call fails.
 */
export async function buildGiven(transport: ScenarioTransport, loaded: LoadedScenario, state: RunState): Promise<RunState> {
  if (state.givenBuilt) return state;
  const next = clone(state);
  const scenario = loaded.scenario;
  if (scenario.webhooks?.receiver) {
    if (!transport.webhookReceiverUrl) {
      // docs/scenarios.md#format: `service-sandbox run` and the server have one; another runner may not
      throw new ScenarioRunError(
        loaded.file,
        loaded.webhooks ?? { line: 1, column: 1 },
        'webhooks: { receiver: true } needs a webhook receiver, and this runner has none: remove it (webhook events are then recorded SKIPPED), ' +
          'or give the session a webhookUrl of your own',
      );
    }
    const url = await transport.webhookReceiverUrl();
    const answer = await control(transport, 'PUT', '/_emulator/webhooks/endpoint', { url }).catch((error: Error) => {
      throw new ScenarioRunError(loaded.file, { line: 1, column: 1 }, error.message);
    });
    if (answer.answer.status !== 200) throw new ScenarioRunError(loaded.file, { line: 1, column: 1 }, `pointing the webhooks at the receiver: ${answer.answer.status} ${messageOf(answer.answer)}`);
  }
  const users = scenario.given?.users ?? [];
  const multi = programmeKey(state.keys);
  for (const [index, user] of users.entries()) {
    const position = loaded.givenUsers?.[index] ?? { line: 1, column: 1 };
    if (!multi) throw new ScenarioRunError(loaded.file, position, `given users are made with programme ${state.keys.programmeId}'s MULTI_USER key, and the run knows none`);
    try {
      await buildUser(transport, next, user, multi);
    } catch (error) {
      if (error instanceof Failure) throw new ScenarioRunError(loaded.file, position, `given user ${user.as}: ${error.message}`);
      throw error;
    }
  }
  next.givenBuilt = true;
  return next;
}

function durationMs(value: number | string): number {
  if (typeof value === 'number') return value;
  const match = DURATION.exec(value)!;
  const amount = Number(match[1]);
  const unit = match[2] ?? 'ms';
  return amount * (unit === 'h' ? 3_600_000 : unit === 'm' ? 60_000 : unit === 's' ? 1000 : 1);
}

/** A sandbox link (a statement file's url) to the path the transport takes: its path and query, prefix dropped. */
function pathOfLink(link: string, prefix: string): string {
  if (link.startsWith('/')) return link;
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new Failure(`path ${show(link)} is neither a /v1 path nor a URL`);
  }
  let path = url.pathname + url.search;
  if (prefix && path.startsWith(`${prefix}/`)) path = path.slice(prefix.length);
  else path = path.replace(/^\/_sessions\/[^/]+/, '');
  return path;
}

async function runRequest(transport: ScenarioTransport, state: RunState, action: NonNullable<ScenarioStep['request']>): Promise<Exchange> {
  let path = resolveText(action.path, state, 'path');
  path = pathOfLink(path, transport.prefix);
  if (!path.startsWith('/v1/')) throw new Failure(`path ${path} is not a /v1 path`);
  const key = keyOf(state.keys, action.as);
  if (!key) throw new Failure('the run knows no key to sign this request with');
  let userId: string | null = null;
  const as = action.as;
  if (typeof as === 'string' && as !== 'programme') userId = state.users[as] ?? null;
  else if (as !== undefined && typeof as === 'object' && as.user !== undefined) userId = as.user.includes('${') ? resolveText(as.user, state, 'user') : (state.users[as.user] ?? as.user);
  if (key.integrationType === 'SINGLE_USER') userId = null;

  let body: string | undefined;
  const headers: Record<string, string> = {};
  const payout = path.startsWith(PAYOUT_PREFIX);
  let shown: unknown;
  if (action.body !== undefined) {
    shown = resolve(action.body, state);
    body = JSON.stringify(shown);
    headers['content-type'] = 'application/json';
  } else if (action.raw !== undefined) {
    body = resolveText(action.raw, state, 'raw');
    shown = body;
    headers['content-type'] = 'text/plain';
  } else if (action.base64 !== undefined) {
    const resolved = resolve(action.base64, state);
    const text = typeof resolved === 'string' ? resolved : JSON.stringify(resolved);
    body = Buffer.from(text, 'utf8').toString('base64');
    shown = resolved;
    headers['content-type'] = 'text/plain';
  }
  if (payout && body !== undefined) headers['content-type'] = 'text/plain';
  if (action.idempotencyKey !== undefined) headers['idempotency-key'] = resolveText(action.idempotencyKey, state, 'idempotencyKey');
  for (const [name, value] of Object.entries(action.headers ?? {})) headers[name.toLowerCase()] = resolveText(value, state, `header ${name}`);
  Object.assign(headers, signedHeaders(key, userId, action.method, transport.prefix + path, body ?? ''));
  const { answer, text } = await send(transport, action.method, path, headers, body);
  return { request: { method: action.method, path, ...(shown === undefined ? {} : { body: shown }) }, answer, text };
}

interface Delivery {
  eventType: string;
  transactionId: string;
  status: string;
}

/** The delivery log, oldest first (bounded: 10 pages of 200). */
async function deliveries(transport: ScenarioTransport, transactionId: string | undefined): Promise<{ exchange: Exchange; list: Delivery[] }> {
  const list: Delivery[] = [];
  let exchange: Exchange | null = null;
  for (let page = 0; page < 10; page++) {
    const query = `sortDirection=ASC&pageSize=200&pageIndex=${page}${transactionId ? `&transactionId=${encodeURIComponent(transactionId)}` : ''}`;
    exchange = await control(transport, 'GET', `/_emulator/webhooks/deliveries?${query}`);
    const answer = expectOk(exchange, [200], 'reading the webhook delivery log').body as { data: Delivery[]; totalRecords: number };
    list.push(...answer.data);
    if (list.length >= answer.totalRecords || answer.data.length === 0) break;
  }
  return { exchange: exchange!, list };
}

/** Whether `wanted` appears in `seen` in order (other events may come between). */
function inOrder(seen: readonly string[], wanted: readonly string[]): boolean {
  let at = 0;
  for (const event of seen) if (event === wanted[at]) at++;
  return at >= wanted.length;
}

async function runAction(transport: ScenarioTransport, state: RunState, step: ScenarioStep, action: ActionName): Promise<Exchange> {
  switch (action) {
    case 'request':
      return runRequest(transport, state, step.request!);
    case 'advance':
      return control(transport, 'POST', '/_emulator/clock', { advanceMs: durationMs(step.advance!) });
    case 'settle':
      return control(transport, 'POST', '/_emulator/settle', {});
    case 'fault':
      return control(transport, 'POST', '/_emulator/faults', resolve(step.fault, state));
    case 'chaos':
      return step.chaos === 'off' ? control(transport, 'DELETE', '/_emulator/webhooks/chaos') : control(transport, 'PUT', '/_emulator/webhooks/chaos', resolve(step.chaos, state));
    case 'force': {
      const { transaction, ...body } = resolve(step.force, state) as { transaction: string };
      return control(transport, 'POST', `/_emulator/transactions/${encodeURIComponent(String(transaction))}/status`, body);
    }
    case 'return': {
      const { transaction, ...body } = resolve(step.return, state) as { transaction: string };
      return control(transport, 'POST', `/_emulator/transactions/${encodeURIComponent(String(transaction))}/return`, body);
    }
    case 'decide': {
      const { informationRequest, decision } = resolve(step.decide, state) as { informationRequest: string; decision: string };
      return control(transport, 'POST', `/_emulator/information-requests/${encodeURIComponent(String(informationRequest))}/decision`, { decision });
    }
    case 'snapshot':
      return control(transport, 'POST', '/_emulator/snapshots', { name: step.snapshot });
    case 'control': {
      const spec = step.control!;
      const path = resolveText(spec.path, state, 'path');
      if (!path.startsWith('/_emulator/')) throw new Failure(`control path ${path} is not a /_emulator path`);
      if (opensSessions(path)) throw new Failure(`control path ${path}: ${SESSIONS_CLOSED}`);
      return control(transport, spec.method, path, spec.body === undefined ? undefined : resolve(spec.body, state));
    }
    case 'waitFor': {
      const spec = resolve(step.waitFor, state) as { events: string[]; transaction?: string };
      let seen: string[] = [];
      // settle until the log holds the events in order; settle runs what is due now and never moves the clock, so a few
      // rounds are enough (a retry due later never comes without `advance`)
      for (let round = 0; round < 5; round++) {
        const { exchange, list } = await deliveries(transport, spec.transaction);
        seen = list.map((delivery) => delivery.eventType);
        if (inOrder(seen, spec.events)) return exchange;
        expectOk(await control(transport, 'POST', '/_emulator/settle', {}), [200], 'settling');
      }
      throw new Failure(`waited for webhook events ${spec.events.join(', ')}${spec.transaction ? ` of ${spec.transaction}` : ''} in order; the delivery log holds ${seen.join(', ') || 'none'} (advance the clock if they are due later)`);
    }
  }
}

function capture(step: ScenarioStep, exchange: Exchange | null, state: RunState): void {
  for (const [name, where] of Object.entries(step.capture ?? {})) {
    if (!exchange) throw new Failure(`capture ${name}: this step sends nothing to capture from`);
    const [root, ...path] = where.split('.');
    const source = root === 'status' ? exchange.answer.status : root === 'headers' ? exchange.answer.headers : root === 'transactionId' ? exchange.answer.transactionId : exchange.answer.body;
    if (root === 'transactionId' && source === undefined) throw new Failure(`capture ${name}: the answer names no transaction (${exchange.answer.status} ${show(exchange.answer.body)})`);
    const found = readPath(source, root === 'headers' ? path.map((part) => part.toLowerCase()) : path);
    if (!found.found) throw new Failure(`capture ${name}: the answer has no ${where} (${exchange.answer.status} ${show(exchange.answer.body)})`);
    state.captures[name] = found.value;
  }
}

/** The answer's status against `expect.status` (any 2xx without one): checked before captures, which need the answer it names. */
function checkStatus(loaded: LoadedScenario, index: number, exchange: Exchange): void {
  const expect = loaded.scenario.steps[index]!.expect;
  const positions = loaded.steps[index]!;
  const statuses = expect?.status === undefined ? null : Array.isArray(expect.status) ? expect.status : [expect.status];
  if (statuses) {
    const at = positions.expectFields.status ?? positions.expect ?? positions.action;
    if (!statuses.includes(exchange.answer.status)) throw new Failure(`expected status ${statuses.join(' or ')}, got ${exchange.answer.status}: ${messageOf(exchange.answer)}`, at);
  } else if (exchange.answer.status < 200 || exchange.answer.status > 299) {
    throw new Failure(`${exchange.request.method} ${exchange.request.path} answered ${exchange.answer.status}: ${messageOf(exchange.answer)} (give expect.status to accept it)`, positions.action);
  }
}

async function runExpect(transport: ScenarioTransport, loaded: LoadedScenario, state: RunState, index: number, exchange: Exchange | null, regex: RegexRunner): Promise<void> {
  const step = loaded.scenario.steps[index]!;
  const positions = loaded.steps[index]!;
  const expect = step.expect;
  const at = (field: string) => positions.expectFields[field] ?? positions.expect ?? positions.action;
  const statuses = expect?.status === undefined ? null : Array.isArray(expect.status) ? expect.status : [expect.status];
  if (exchange) {
    checkStatus(loaded, index, exchange);
  } else if (statuses || expect?.body || expect?.headers || expect?.text !== undefined) {
    throw new Failure('this step sends nothing: expect status, body, headers and text need an action', positions.expect ?? positions.step);
  }
  if (!expect) return;
  for (const [field, expected] of Object.entries(expect.body ?? {})) {
    const found = readPath(exchange!.answer.body, field.split('.'));
    const problem = check(found.found, found.value, resolve(expected, state), regex);
    if (problem) throw new Failure(`body.${field}: ${problem}`, at(`body.${field}`));
  }
  for (const [field, expected] of Object.entries(expect.headers ?? {})) {
    const name = field.toLowerCase();
    const present = Object.prototype.hasOwnProperty.call(exchange!.answer.headers, name);
    const problem = check(present, exchange!.answer.headers[name], resolve(expected, state), regex);
    if (problem) throw new Failure(`header ${name}: ${problem}`, at(`headers.${field}`));
  }
  if (expect.text !== undefined) {
    const problem = check(true, exchange!.text, resolve(expect.text, state), regex);
    if (problem) throw new Failure(`text: ${problem}`, at('text'));
  }
  if (expect.balance) {
    const reference = expect.balance.account;
    const accountId = state.given[reference] ? String(state.given[reference]!.id) : resolveText(reference, state, 'account');
    const history = await control(transport, 'GET', `/_emulator/accounts/${encodeURIComponent(accountId)}/balance-history`);
    const body = expectOk(history, [200], `reading account ${reference}'s balances`).body as { points: Array<{ current: string; available: string }> };
    const now = body.points[body.points.length - 1] ?? { current: '0', available: '0' };
    for (const field of ['available', 'current'] as const) {
      if (expect.balance[field] === undefined) continue;
      const problem = check(true, now[field], resolve(expect.balance[field], state), regex);
      if (problem) throw new Failure(`balance of ${reference}, ${field}: ${problem}`, at(`balance.${field}`));
    }
  }
  if (expect.webhooks) {
    const spec = resolve(expect.webhooks, state) as { events: string[]; transaction?: string };
    const { list } = await deliveries(transport, spec.transaction);
    const seen = list.map((delivery) => delivery.eventType);
    if (!inOrder(seen, spec.events)) {
      throw new Failure(`expected webhook events ${spec.events.join(', ')}${spec.transaction ? ` of ${spec.transaction}` : ''} in order; the delivery log holds ${seen.join(', ') || 'none'}`, at('webhooks'));
    }
  }
}

/**
 * Run step `index` (the next one: steps run in order, after buildGiven). A failure is a result (passed false, with the
 * file's line and column), not a throw; the returned state has `failed` set and the run stops there. `regex`: where its
 * `matches` run, with their time budget; steps run in one go (a played step's) pass the same one (docs/scenarios.md#matchers).
 */
export async function runStep(transport: ScenarioTransport, loaded: LoadedScenario, state: RunState, index: number, regex: RegexRunner = new RegexRunner()): Promise<{ state: RunState; result: StepResult }> {
  if (!state.givenBuilt) throw new Error('buildGiven must run before the first step');
  if (state.failed) throw new Error('the run has failed: no step runs after a failed one');
  if (index !== state.next) throw new Error(`step ${index + 1} is not the next step (${state.next + 1})`);
  const step = loaded.scenario.steps[index];
  if (!step) throw new Error(`the scenario has ${loaded.scenario.steps.length} steps; there is no step ${index + 1}`);
  const positions = loaded.steps[index]!;
  const next = clone(state);
  const started = performance.now();
  const action = positions.actionName;
  const result: StepResult = { index, id: step.id ?? null, caption: step.caption ?? null, note: step.note ?? null, action: action ?? 'expect', passed: true, durationMs: 0 };
  let exchange: Exchange | null = null;
  try {
    if (action) {
      exchange = await runAction(transport, next, step, action);
      result.request = exchange.request;
      result.answer = { status: exchange.answer.status, body: exchange.answer.body };
      const transactionId =
        action === 'force' || action === 'return' ? (transactionOf(exchange.answer.body) ?? String((resolve(step[action], next) as { transaction: string }).transaction)) : transactionOf(exchange.answer.body);
      if (transactionId && transactionId.startsWith('txn_')) result.transactionId = transactionId;
      if (result.transactionId) exchange.answer.transactionId = result.transactionId;
      if (step.id) next.answers[step.id] = exchange.answer;
    }
    // docs/scenarios.md#capture: a wrong status is named as such, not as a capture the answer cannot give
    if (exchange) checkStatus(loaded, index, exchange);
    capture(step, exchange, next);
    await runExpect(transport, loaded, next, index, exchange, regex);
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    const position = error.position ?? positions.action;
    result.passed = false;
    result.failure = { message: error.message, line: position.line, column: position.column };
    next.failed = true;
  }
  result.durationMs = Math.round(performance.now() - started);
  next.next = index + 1;
  return { state: next, result };
}

/** Everything: `given`, then every step until the first failure. */
export async function runScenario(
  transport: ScenarioTransport,
  loaded: LoadedScenario,
  keys: KeyBook,
  hooks: { onStep?(result: StepResult): void } = {},
): Promise<ScenarioResult> {
  const started = performance.now();
  let state = startRun(loaded, keys);
  const steps: StepResult[] = [];
  const done = (failure?: ScenarioResult['failure']): ScenarioResult => ({
    file: loaded.file,
    name: loaded.scenario.name,
    passed: failure === undefined,
    durationMs: Math.round(performance.now() - started),
    steps,
    ...(failure ? { failure } : {}),
    state,
  });
  try {
    state = await buildGiven(transport, loaded, state);
  } catch (error) {
    if (error instanceof ScenarioRunError) return done({ step: -1, message: error.message, line: error.line, column: error.column });
    throw error;
  }
  for (let index = 0; index < loaded.scenario.steps.length; index++) {
    // each step's matches share one time budget (docs/scenarios.md#matchers)
    const ran = await runStep(transport, loaded, state, index, new RegexRunner());
    state = ran.state;
    steps.push(ran.result);
    hooks.onStep?.(ran.result);
    if (!ran.result.passed) return done({ step: index, ...ran.result.failure! });
  }
  return done();
}
