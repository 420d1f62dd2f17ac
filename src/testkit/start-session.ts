import { readFileSync } from 'node:fs';
import { DEFAULT_SESSION_CLOCK } from '../client/client.js';
import { DEFAULT_TIMEOUT_MS } from '../client/timeout.js';
import type { Fixtures } from '../fixtures/fixtures.schema.js';
import { signedFetcher, startWebhookInbox, type SandboxClient, type SandboxCredentials } from './kit-parts.js';
import type { FaultRule } from '../faults/fault-rules.schema.js';
import type { WebhookChaos } from '../faults/webhook-chaos.schema.js';

// The test kit's session mode (docs/test-kit.md#sessions-from-node): a fresh, isolated session of an emulator
// that is already running (npm start, Docker, a CI service), with a webhook receiver attached. Tests running
// in parallel each take their own.
//
//   const sandbox = await startSession({ url: 'http://127.0.0.1:4010' });
//   const res = await sandbox.signedFetch('GET', '/v1/accounts');
//   await sandbox.close(); // ends the session

export interface SessionSandboxOptions {
  /** The running emulator (default: SANDBOX_URL, else http://127.0.0.1:4010). */
  url?: string;
  /** The server's --admin-token, when it has one (default: ADMIN_TOKEN). */
  adminToken?: string;
  /** Fixtures for this session instead of the server's. */
  fixtures?: Fixtures;
  /** Start from this snapshot of the server's root sandbox. */
  snapshot?: string;
  /** `realtime` or an ISO instant to start frozen at (default: frozen at DEFAULT_SESSION_CLOCK, as every kit; a snapshot's own clock). */
  clock?: string;
  /** Ids follow this seed, as on a server started with --seed (docs/sessions.md#ids); default: the session's own. */
  seed?: string;
  /** A name for a run's sessions, to list or end them together (docs/sessions.md#labels). */
  label?: string;
  /** Attach a webhook receiver and set it as the session's endpoint (default true). */
  webhooks?: boolean;
  /**
   * Start from a scenario (docs/sessions.md#scenarios): the name of one the server knows (shipped, or of its
   * --scenarios folder), a scenario file's text, or the scenario as an object. Its seed, clock and fixtures apply and
   * its `given` is built before startSession resolves; the kit's default clock does not apply.
   */
  scenario?: string | Record<string, unknown>;
  /** Start from the scenario in this file (YAML or JSON), read here and sent as text: as `scenario`. */
  scenarioFile?: string;
}

/** What the session's scenario made (docs/sessions.md#scenarios). */
export interface SessionScenario {
  name: string;
  source: 'shipped' | 'folder' | 'given';
  /** Its steps as played (GET {url}/_emulator/scenario). */
  steps: number;
  /** What its `given` made: each name and its id. */
  given: Record<string, string>;
}

export interface SessionSandbox extends SandboxClient {
  /** The session id (ses_...). */
  id: string;
  /** The scenario the session started from, and what its `given` made; null without one. */
  scenario: SessionScenario | null;
}

interface SessionAnswer {
  id: string;
  baseUrl: string;
  credentials: { programmeId: string; single: SandboxCredentials['single'] | null; multi: SandboxCredentials['multi'] | null; webhook: SandboxCredentials['webhook'] };
  scenario?: SessionScenario | null;
}

export async function startSession(options: SessionSandboxOptions = {}): Promise<SessionSandbox> {
  const server = (options.url ?? process.env.SANDBOX_URL ?? 'http://127.0.0.1:4010').replace(/\/+$/, '');
  const adminToken = options.adminToken ?? process.env.ADMIN_TOKEN;
  const control = async (url: string, method: string, body?: unknown): Promise<unknown> => {
    const headers: Record<string, string> = {};
    if (adminToken) headers.Authorization = `Bearer ${adminToken}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    // bounded as every call of the client kit (docs/clients.md#timeouts): a server that never answers fails the test
    const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(DEFAULT_TIMEOUT_MS) });
    const text = await response.text();
    if (!response.ok) {
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the text as it came
      }
      throw Object.assign(new Error(`${method} ${url}: ${response.status} ${text}`), { status: response.status, body });
    }
    return text ? JSON.parse(text) : null;
  };

  if (options.scenario !== undefined && options.scenarioFile !== undefined) throw new Error('startSession: give scenario or scenarioFile, not both');
  const scenario = options.scenarioFile !== undefined ? readFileSync(options.scenarioFile, 'utf8') : options.scenario;
  const inbox = options.webhooks === false ? undefined : await startWebhookInbox();
  // the fixtures' keys are known now; the session's own once it answers (a delivery before that is refused and retried)
  const fixtureKeys = (options.fixtures?.programmes ?? []).map((programme) => programme.webhook);
  inbox?.expect(() => fixtureKeys);
  let session: SessionAnswer;
  try {
    session = (await control(`${server}/_emulator/sessions`, 'POST', {
      ...(options.fixtures ? { fixtures: options.fixtures } : {}),
      ...(options.snapshot ? { snapshot: options.snapshot } : {}),
      ...(options.clock ? { clock: options.clock } : options.snapshot || scenario !== undefined ? {} : { clock: DEFAULT_SESSION_CLOCK }),
      ...(scenario !== undefined ? { scenario } : {}),
      ...(options.seed ? { seed: options.seed } : {}),
      ...(options.label ? { label: options.label } : {}),
      ...(inbox ? { webhookUrl: inbox.url } : {}),
    })) as SessionAnswer;
  } catch (error) {
    await inbox?.close();
    throw error;
  }
  const credentials: SandboxCredentials = {
    programmeId: session.credentials.programmeId,
    single: session.credentials.single ?? { apiKey: '', secret: '', userId: '' },
    multi: session.credentials.multi ?? { apiKey: '', secret: '' },
    webhook: session.credentials.webhook,
  };
  inbox?.expect(() => [credentials.webhook, ...fixtureKeys]);
  const base = session.baseUrl;
  let closed = false;
  return {
    id: session.id,
    scenario: session.scenario ?? null,
    url: base,
    credentials,
    signedFetch: signedFetcher(base, credentials),
    async advanceClock(ms) {
      await control(`${base}/_emulator/clock`, 'POST', { advanceMs: ms });
    },
    async reset() {
      await control(`${base}/_emulator/reset`, 'POST');
      inbox?.clear();
    },
    async snapshot(name) {
      await control(`${base}/_emulator/snapshots`, 'POST', { name });
    },
    async restore(name) {
      await control(`${base}/_emulator/snapshots/${encodeURIComponent(name)}/restore`, 'POST');
      inbox?.clear();
    },
    async addFault(rule) {
      return (await control(`${base}/_emulator/faults`, 'POST', rule)) as FaultRule;
    },
    async clearFaults() {
      await control(`${base}/_emulator/faults`, 'DELETE');
    },
    async setWebhookChaos(settings) {
      return (await control(`${base}/_emulator/webhooks/chaos`, 'PUT', settings)) as WebhookChaos;
    },
    async clearWebhookChaos() {
      await control(`${base}/_emulator/webhooks/chaos`, 'DELETE');
    },
    webhooks: inbox
      ? { received: inbox.received, rejected: inbox.rejected, waitFor: inbox.waitFor, clear: inbox.clear }
      : { received: () => [], rejected: () => [], waitFor: () => Promise.reject(new Error('startSession({ webhooks: false }) has no receiver')), clear: () => undefined },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await control(`${server}/_emulator/sessions/${session.id}`, 'DELETE');
      } catch (error) {
        if ((error as { status?: number }).status !== 404) throw error; // 404: already ended (expired), nothing to do
      } finally {
        await inbox?.close();
      }
    },
  };
}
