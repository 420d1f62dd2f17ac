import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './generated/openapi.js';
import { forwardWebhooks, type ForwardWebhooksOptions, type WebhookForwarder } from './forward.js';
import { DEFAULT_SINGLE_KEY, signedHeaders, signingMiddleware, type SigningKey } from './signing.js';
import { checkServerVersion } from './version-check.js';
import { timeoutOf, timeoutSignal } from './timeout.js';

// The typed client of `service-sandbox/client` (docs/clients.md#typescript): openapi-fetch over the types
// generated from the committed openapi/openapi.json (src/client/generated/openapi.ts), every request signed by
// src/client/signing.ts, and the control plane (docs/control-plane.md, docs/sessions.md, docs/faults.md) as plain
// typed functions that answer the resource or throw a SandboxApiError.

export type Schemas = components['schemas'];
export type Session = Schemas['Session'];
export type SettleReport = Schemas['SettleReport'];
export type Clock = Schemas['Clock'];
export type Snapshot = Schemas['Snapshot'];
export type FaultRule = Schemas['FaultRule'];
export type WebhookChaos = Schemas['WebhookChaos'];
export type WebhookDeliveryList = Schemas['WebhookDeliveryList'];
export type ListenStatus = Schemas['ListenStatus'];
export type EndedSessions = Schemas['EndedSessions'];
export type PayoutJsonPayload = Schemas['PayoutJsonPayload'];
export type ServiceError = Schemas['ServiceError'];

type JsonBody<Operation> = Operation extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never;
export type CreateSessionOptions = JsonBody<operations['emulatorCreateSession']>;
export type FaultRuleInput = JsonBody<operations['emulatorAddFaultRule']>;
export type WebhookChaosInput = JsonBody<operations['emulatorSetWebhookChaos']>;
export type WebhookDeliveryQuery = NonNullable<operations['emulatorListWebhookDeliveries']['parameters']['query']>;

/** A refusal of the sandbox: the method, URL and status in the message, the parsed error body in `body`. */
export class SandboxApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what}: ${status} ${typeof body === 'string' ? body : JSON.stringify(body)}`);
    this.name = 'SandboxApiError';
  }
}

/**
 * A settle whose `timeoutMs` passed before the sandbox was idle (an attempt still on the wire, jobs still running):
 * the report, `settled: false`, is on the error (docs/control-plane.md#settle).
 */
export class NotSettledError extends Error {
  constructor(readonly report: SettleReport) {
    const waiting = Object.entries(report.waiting)
      .filter(([, count]) => typeof count === 'number' && count > 0)
      .map(([what, count]) => `${String(count)} ${what}`);
    super(`the sandbox did not settle within the timeout (waited ${report.waitedMs} ms; still waiting: ${waiting.join(', ') || 'nothing counted'})`);
    this.name = 'NotSettledError';
  }
}

/** The instant sessions the kit creates are frozen at unless you give a `clock` (docs/clients.md#the-default-clock), as in every kit. */
export const DEFAULT_SESSION_CLOCK = '2026-03-01T12:00:00.000Z';

/** An AbortSignal for a call that may wait (docs/clients.md#cancelling). */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface SettleOptions extends CallOptions {
  /** How long the server waits for the sandbox to be idle (its default when absent). */
  timeoutMs?: number;
}

export interface SandboxClientOptions {
  /** The root (`http://127.0.0.1:4010`) or a session's base URL (`.../_sessions/ses_...`). */
  baseUrl: string;
  /** The key /v1 requests are signed with (default: the default fixtures' SINGLE_USER key). */
  key?: SigningKey;
  /** The admin token of a server started with --admin-token, for the control plane. */
  adminToken?: string;
  /** A fetch of your own (default: the global one). */
  fetch?: typeof fetch;
  /**
   * Real ms a call may take before it rejects with a SandboxTimeoutError (default 60 s, DEFAULT_TIMEOUT_MS; `Infinity`:
   * none). A settle's own wait is added to it; the forwarding stream is not bounded once it is open.
   */
  timeoutMs?: number;
  /** The session `baseUrl` belongs to (set by `forSession`). */
  session?: Session;
}

export type SandboxApi = Client<paths>;

export interface SandboxClient {
  /** The root (`http://127.0.0.1:4010`) or a session's base URL (`.../_sessions/ses_...`). */
  readonly baseUrl: string;
  readonly key: SigningKey;
  /** The session this client talks to (`id`, `baseUrl`, `credentials`), for a client from `forSession`. */
  readonly session: Session | undefined;
  /** The typed openapi-fetch client: `api.GET('/v1/accounts', ...)`, every /v1 request signed. */
  readonly api: SandboxApi;
  /** The same sandbox, signed with another key (a MULTI_USER key, another programme's). */
  withKey(key: SigningKey): SandboxClient;
  /** A client of a session (its base URL, its fixtures' SINGLE_USER key or `key`). */
  forSession(session: Session, key?: SigningKey): SandboxClient;
  /**
   * Submit a payout (docs/payouts.md): the message (a JSON payload, pacs.008 XML text or bytes) is sent as Base64
   * text/plain with the payout variant's headers, computed here; the Idempotency-Key is yours.
   */
  payout(
    format: 'json' | 'pacs008',
    message: PayoutJsonPayload | string | Uint8Array,
    options: { idempotencyKey: string; userId?: string },
  ): Promise<PayoutResult>;

  // sessions (docs/sessions.md), on the root
  /** A new session, frozen at DEFAULT_SESSION_CLOCK unless `clock` says otherwise (`'realtime'` or an instant) or it starts from a `snapshot` (its clock). */
  createSession(options?: CreateSessionOptions, call?: CallOptions): Promise<Session>;
  listSessions(label?: string): Promise<Session[]>;
  endSession(id: string, call?: CallOptions): Promise<void>;
  endSessions(label: string, call?: CallOptions): Promise<EndedSessions>;
  // the sandbox this client talks to (the root or a session): docs/control-plane.md
  reset(call?: CallOptions): Promise<void>;
  clock(): Promise<Clock>;
  advanceClock(ms: number, call?: CallOptions): Promise<Clock>;
  freezeClock(at: string | Date): Promise<Clock>;
  /**
   * Wait until nothing is left to do at the current emulated instant (docs/control-plane.md#settle): the report, or a
   * NotSettledError (the report on it) when the timeout passed first. A number is `{ timeoutMs }`.
   */
  settle(options?: SettleOptions | number): Promise<SettleReport>;
  /**
   * Settle, and while deliveries still wait for a later emulated instant (a retry after a refusal), advance the
   * clock to the report's `nextDueAt` and settle again: the last report, `waiting.deliveries` 0 unless `maxRounds`
   * (default 20) ran out. The clock moves, so jobs due by then run too (docs/control-plane.md#settle). A
   * NotSettledError when one of the settles timed out.
   */
  settleUntilIdle(options?: SettleOptions & { maxRounds?: number }): Promise<SettleReport>;
  /**
   * Forward this sandbox's webhooks to your app's URL (docs/clients.md#forwarding): resolves once the relay is ready;
   * `stop()`, `signal` or `await using` ends it, and it ends by itself (`ended`) when the session ends.
   */
  forwardWebhooks(appUrl: string, options?: Omit<ForwardWebhooksOptions, 'adminToken' | 'fetch'>): Promise<WebhookForwarder>;
  saveSnapshot(name: string): Promise<Snapshot>;
  restoreSnapshot(name: string, call?: CallOptions): Promise<Snapshot>;
  /** A saved snapshot as one file (a SQLite database's bytes), for `uploadSnapshot` or `--snapshot FILE`. */
  exportSnapshot(name: string): Promise<Uint8Array>;
  /** Store an exported file under a name (on the root: a snapshot sessions can start from, docs/sessions.md). */
  uploadSnapshot(name: string, file: Uint8Array): Promise<Snapshot>;
  deleteSnapshot(name: string): Promise<void>;
  addFault(rule: FaultRuleInput): Promise<FaultRule>;
  clearFaults(): Promise<void>;
  setWebhookChaos(settings: WebhookChaosInput): Promise<WebhookChaos>;
  clearWebhookChaos(): Promise<void>;
  webhookDeliveries(query?: WebhookDeliveryQuery): Promise<WebhookDeliveryList>;
  listenStatus(): Promise<ListenStatus>;
}

export type PayoutResult = Awaited<ReturnType<typeof submitPayout>>;

/** A client of one sandbox (the root or a session). */
export function createSandboxClient(options: SandboxClientOptions): SandboxClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const key = options.key ?? DEFAULT_SINGLE_KEY;
  const api = createClient<paths>({ baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
  // first, so the version check below and the call share one deadline (docs/clients.md#timeouts)
  api.use(timeoutMiddleware(timeoutOf(options.timeoutMs)));
  // the first request to a server reads its version and warns once when it differs (docs/clients.md#versions)
  api.use({
    onRequest: async ({ request }) => {
      await checkServerVersion(baseUrl, { adminToken: options.adminToken, ...(options.fetch ? { fetch: options.fetch } : {}), signal: request.signal });
      return undefined;
    },
  });
  api.use(signingMiddleware(key, { ...(options.adminToken ? { adminToken: options.adminToken } : {}) }));
  const settleOnce = async (timeoutMs: number | undefined, signal: AbortSignal | undefined) => {
    const report = data('POST /_emulator/settle', await api.POST('/_emulator/settle', { body: timeoutMs === undefined ? {} : { timeoutMs }, signal }));
    if (!report.settled) throw new NotSettledError(report);
    return report;
  };

  const data = <T>(what: string, result: { data?: T; error?: unknown; response: Response }): T => {
    if (!result.response.ok || result.data === undefined) throw new SandboxApiError(result.response.status, result.error, what);
    return result.data;
  };
  const done = (what: string, result: { error?: unknown; response: Response }): void => {
    if (!result.response.ok) throw new SandboxApiError(result.response.status, result.error, what);
  };

  return {
    baseUrl,
    key,
    session: options.session,
    api,
    withKey: (other) => createSandboxClient({ ...options, key: other }),
    forSession: (session, sessionKey) =>
      createSandboxClient({ ...options, baseUrl: session.baseUrl, key: sessionKey ?? singleKeyOf(session), session }),
    payout: (format, message, payoutOptions) => submitPayout(api, baseUrl, key, format, message, payoutOptions),

    createSession: async (body = {}, { signal } = {}) =>
      // a snapshot holds its own clock (docs/sessions.md#what-a-session-starts-from), and a scenario may
      // (docs/sessions.md#scenarios): the default applies without either
      data(
        'POST /_emulator/sessions',
        await api.POST('/_emulator/sessions', { body: body.snapshot || body.scenario !== undefined ? body : { clock: DEFAULT_SESSION_CLOCK, ...body }, signal }),
      ),
    listSessions: async (label) =>
      data('GET /_emulator/sessions', await api.GET('/_emulator/sessions', { params: { query: label === undefined ? {} : { label } } })).data,
    endSession: async (id, { signal } = {}) =>
      done(`DELETE /_emulator/sessions/${id}`, await api.DELETE('/_emulator/sessions/{id}', { params: { path: { id } }, signal })),
    endSessions: async (label, { signal } = {}) =>
      data('DELETE /_emulator/sessions', await api.DELETE('/_emulator/sessions', { params: { query: { label } }, signal })),

    reset: async ({ signal } = {}) => done('POST /_emulator/reset', await api.POST('/_emulator/reset', { signal })),
    clock: async () => data('GET /_emulator/clock', await api.GET('/_emulator/clock')),
    advanceClock: async (ms, { signal } = {}) => data('POST /_emulator/clock', await api.POST('/_emulator/clock', { body: { advanceMs: ms }, signal })),
    freezeClock: async (at) =>
      data('POST /_emulator/clock', await api.POST('/_emulator/clock', { body: { freezeAt: typeof at === 'string' ? at : at.toISOString() } })),
    settle: async (settleOptions = {}) => {
      const { timeoutMs, signal } = typeof settleOptions === 'number' ? { timeoutMs: settleOptions, signal: undefined } : settleOptions;
      return settleOnce(timeoutMs, signal);
    },
    settleUntilIdle: async ({ maxRounds = 20, timeoutMs, signal } = {}) => {
      let report = await settleOnce(timeoutMs, signal);
      for (let round = 0; round < maxRounds && report.waiting.deliveries > 0 && report.nextDueAt !== null; round++) {
        const advanceMs = Math.max(1, Date.parse(report.nextDueAt) - Date.parse(report.now));
        data('POST /_emulator/clock', await api.POST('/_emulator/clock', { body: { advanceMs }, signal }));
        report = await settleOnce(timeoutMs, signal);
      }
      return report;
    },
    forwardWebhooks: (appUrl, forwardOptions = {}) =>
      forwardWebhooks(baseUrl, appUrl, {
        ...forwardOptions,
        ...(options.adminToken ? { adminToken: options.adminToken } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      }),
    saveSnapshot: async (name) => data('POST /_emulator/snapshots', await api.POST('/_emulator/snapshots', { body: { name } })),
    exportSnapshot: async (name) => {
      const result = await api.GET('/_emulator/snapshots/{name}/export', { params: { path: { name } }, parseAs: 'arrayBuffer' });
      return new Uint8Array(data(`GET /_emulator/snapshots/${name}/export`, result));
    },
    uploadSnapshot: async (name, file) =>
      data(
        `PUT /_emulator/snapshots/${name}`,
        await api.PUT('/_emulator/snapshots/{name}', {
          params: { path: { name } },
          // the operation declares no JSON body: the file goes as it is (docs/control-plane.md#snapshots)
          body: file as never,
          bodySerializer: () => file,
          headers: { 'Content-Type': 'application/octet-stream' },
        }),
      ),
    deleteSnapshot: async (name) =>
      done(`DELETE /_emulator/snapshots/${name}`, await api.DELETE('/_emulator/snapshots/{name}', { params: { path: { name } } })),
    restoreSnapshot: async (name, { signal } = {}) =>
      data(`POST /_emulator/snapshots/${name}/restore`, await api.POST('/_emulator/snapshots/{name}/restore', { params: { path: { name } }, signal })).snapshot,
    addFault: async (rule) => data('POST /_emulator/faults', await api.POST('/_emulator/faults', { body: rule })),
    clearFaults: async () => done('DELETE /_emulator/faults', await api.DELETE('/_emulator/faults')),
    setWebhookChaos: async (settings) => data('PUT /_emulator/webhooks/chaos', await api.PUT('/_emulator/webhooks/chaos', { body: settings })),
    clearWebhookChaos: async () => done('DELETE /_emulator/webhooks/chaos', await api.DELETE('/_emulator/webhooks/chaos')),
    webhookDeliveries: async (query = {}) =>
      data('GET /_emulator/webhooks/deliveries', await api.GET('/_emulator/webhooks/deliveries', { params: { query } })),
    listenStatus: async () => data('GET /_emulator/webhooks/listen', await api.GET('/_emulator/webhooks/listen')),
  };
}

/** The server's own wait in a call, added to the timeout: a settle's `timeoutMs` (default 10 s), docs/control-plane.md#settle. */
async function serverWaitMs(request: Request, schemaPath: string): Promise<number> {
  if (!schemaPath.endsWith('/_emulator/settle')) return 0;
  const body = (await request
    .clone()
    .json()
    .catch(() => ({}))) as { timeoutMs?: unknown };
  return typeof body.timeoutMs === 'number' ? body.timeoutMs : 10_000;
}

/**
 * Bounds every call of `api` but a stream (`parseAs: 'stream'`): the request gets a signal that aborts with a
 * SandboxTimeoutError after `ms` (plus the server's own wait), or with the caller's signal's reason.
 */
function timeoutMiddleware(ms: number): Middleware {
  return {
    onRequest: async ({ request, schemaPath, options }) => {
      if (options.parseAs === 'stream' || !Number.isFinite(ms)) return undefined;
      const bounded = timeoutSignal(`${request.method} ${request.url}`, ms + (await serverWaitMs(request, schemaPath)), request.signal);
      // the timer is unref'd and left to run out: the body is read after the middlewares have handed the answer back
      return new Request(request, { signal: bounded.signal });
    },
  };
}

/** The SINGLE_USER key a session's fixtures hand out (docs/sessions.md), else its MULTI_USER key. */
function singleKeyOf(session: Session): SigningKey {
  const { programmeId, single, multi } = session.credentials;
  const pair = single ?? multi;
  if (!pair) throw new Error(`session ${session.id} has no SINGLE_USER or MULTI_USER key: pass one to forSession`);
  return { apiKey: pair.apiKey, secret: pair.secret, programmeId };
}

function base64Of(message: PayoutJsonPayload | string | Uint8Array): string {
  if (typeof message === 'string') return Buffer.from(message, 'utf8').toString('base64');
  if (message instanceof Uint8Array) return Buffer.from(message).toString('base64');
  return Buffer.from(JSON.stringify(message), 'utf8').toString('base64');
}

/** The payout call: Base64 text, the payout variant signed over the path as sent (docs/payouts.md#rules). */
function submitPayout(
  api: SandboxApi,
  baseUrl: string,
  key: SigningKey,
  format: 'json' | 'pacs008',
  message: PayoutJsonPayload | string | Uint8Array,
  options: { idempotencyKey: string; userId?: string },
) {
  const body = base64Of(message);
  const target = new URL(`${baseUrl}/v1/payout-origination/${format}`).pathname;
  const signed = signedHeaders({ key, method: 'POST', target, body });
  return api.POST('/v1/payout-origination/{format}', {
    params: {
      path: { format },
      header: {
        'Idempotency-Key': options.idempotencyKey,
        'X-Service-Timestamp': signed['X-Service-Timestamp']!,
        'X-Service-Signature': signed['X-Service-Signature']!,
        'X-Service-Program-Id': key.programmeId,
        ...(options.userId === undefined ? {} : { 'X-Service-User-Id': options.userId }),
      },
    },
    headers: { 'X-Service-Api-Key': key.apiKey, 'Content-Type': 'text/plain' },
    body,
    bodySerializer: (text: string) => text,
  });
}
