import type { Writable } from 'node:stream';
import tap from 'tap';
import type { FastifyInstance, FastifyPluginAsync, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type BuildAppOptions } from '../src/app.js';
import { createContext } from '../src/create-context.js';
import { openSandbox } from '../src/sandbox.js';
import { createSessionRegistry, type SessionRegistry } from '../src/sessions/sessions.registry.js';
import type { AppContext } from '../src/context.js';
import { createClock } from '../src/lib/clock.js';
import { signRequest } from '../src/lib/hmac.js';
import type { Config } from '../src/config.js';
import { describeMismatches, withConformance, type ConformanceRecorder } from './helpers/conformance.js';

// Tests build the app on a fresh in-memory database with a manual (frozen) clock
// (docs/architecture.md#how-tests-are-built).

export const START = '2026-03-01T12:00:00.000Z';

export const CREDENTIALS = {
  programmeId: 'prg_sandbox',
  single: { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', userId: 'usr_acme' },
  multi: { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' },
  other: { apiKey: 'pk_other_multi', secret: 'sk_other_multi_secret', programmeId: 'prg_other', userId: 'usr_other' },
  webhook: { apiKey: 'wk_sandbox', secret: 'whsec_sandbox_secret' },
} as const;

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  /** The sessions the app serves (docs/sessions.md); `app.inject` reaches one at `/_sessions/{id}/...`. */
  sessions: SessionRegistry;
  /** Signed request as usr_acme with the SINGLE_USER key (default), or another identity. */
  request(method: string, url: string, body?: unknown, as?: Identity): Promise<LightMyRequestResponse>;
  /** HMAC headers for a request (docs/authentication.md). */
  sign(method: string, url: string, body?: string, as?: Identity): Record<string, string>;
  /**
   * Response conformance (docs/robustness.md#response-conformance-every-test): every response of this app checked
   * against its /openapi.json (the media type, and the schema of a JSON body). close() fails the test file when any did
   * not match; `conformance.mismatches` lists them until then.
   */
  conformance: ConformanceRecorder;
  close(): Promise<void>;
}

export interface Identity {
  apiKey?: string;
  secret?: string;
  programmeId?: string;
  /** X-Service-User-Id (for MULTI_USER keys). */
  userId?: string;
  bearer?: string;
  timestamp?: string;
}

export const AS_JANE: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret, userId: 'usr_jane' };
export const AS_ACME_MULTI: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret, userId: 'usr_acme' };
export const AS_OTHER: Identity = {
  apiKey: CREDENTIALS.other.apiKey,
  secret: CREDENTIALS.other.secret,
  programmeId: CREDENTIALS.other.programmeId,
  userId: CREDENTIALS.other.userId,
};

export interface TestAppOptions {
  start?: string;
  config?: Partial<Config>;
  db?: string;
  /** Capture log lines (set config.logLevel too, the default is silent). */
  logStream?: Writable;
  /** Extra plugins, e.g. probe routes that exercise a foundation helper through HTTP. */
  plugins?: FastifyPluginAsync[];
  /**
   * Check every response against the published OpenAPI document (default true; test/helpers/conformance.ts).
   * Turn it off only for a test that sends a deliberately non-conforming response through a probe route.
   */
  conformance?: boolean;
  /** Request timeout and connection cap (docs/robustness.md#connections); tests of those shorten them. */
  limits?: BuildAppOptions['limits'];
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const clock = createClock({ mode: 'frozen', atMs: Date.parse(options.start ?? START) });
  const ctx = createContext({ config: { logLevel: 'silent', db: options.db ?? ':memory:', ...options.config }, clock });
  const sessions = createSessionRegistry(ctx, openSandbox);
  const build = () => buildApp(ctx, { logStream: options.logStream, plugins: options.plugins, sessions, limits: options.limits });
  const built = options.conformance === false ? { result: build(), recorder: () => undefined } : withConformance(build);
  const app = await built.result;
  const conformance: ConformanceRecorder = built.recorder() ?? { mismatches: [], checked: 0, enabled: false };

  function sign(method: string, url: string, body = '', as: Identity = {}): Record<string, string> {
    const apiKey = as.apiKey ?? CREDENTIALS.single.apiKey;
    const secret = as.secret ?? CREDENTIALS.single.secret;
    const timestamp = as.timestamp ?? String(Date.now());
    const headers: Record<string, string> = {
      'x-service-api-key': apiKey,
      'x-service-timestamp': timestamp,
      'x-service-program-id': as.programmeId ?? CREDENTIALS.programmeId,
      'x-service-signature': signRequest({ apiKey, secret, timestamp, method, target: url, body }),
    };
    if (as.userId) headers['x-service-user-id'] = as.userId;
    return headers;
  }

  async function request(method: string, url: string, body?: unknown, as: Identity = {}): Promise<LightMyRequestResponse> {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const headers: Record<string, string> = as.bearer ? { authorization: `Bearer ${as.bearer}` } : sign(method, url, payload ?? '', as);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    return app.inject({ method: method as InjectOptions['method'], url, payload, headers });
  }

  return {
    app,
    ctx,
    sessions,
    request,
    sign,
    conformance,
    async close() {
      await app.close();
      if (ctx.db.open) ctx.db.close();
      if (conformance.mismatches.length > 0) {
        const report = describeMismatches(conformance.mismatches);
        conformance.mismatches.length = 0; // report once, even if close() is called again
        // A failure of the file's root test, not a throw: tap stops running a test's remaining teardowns
        // after one throws, so receivers or browsers registered before this close() would keep the file
        // alive until its timeout instead of failing it at once.
        tap.fail(report);
      }
    },
  };
}

/** Parse a JSON response body. */
export function json<T = any>(response: LightMyRequestResponse): T {
  return JSON.parse(response.body) as T;
}

/**
 * Advance the emulated clock through the control plane (`POST /_emulator/clock`, which runs every job due by the new
 * time before it answers: docs/architecture.md#the-request-path); any answer but 200 fails the caller. The one clock
 * helper of the tests. Returns the clock's answer (`now`: the new emulated time).
 */
export async function advance(sandbox: TestApp, ms: number): Promise<{ now: string }> {
  const response = await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { advanceMs: ms } });
  if (response.statusCode !== 200) throw new Error(`clock advance by ${ms} ms: ${response.statusCode} ${response.body}`);
  return json(response);
}
