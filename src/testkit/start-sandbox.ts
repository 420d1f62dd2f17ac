import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startServer, type RunningServer } from '../server.js';
import { advanceClock } from '../scheduler/scheduler.js';
import { resetSandbox } from '../emulator/reset.service.js';
import { restoreNamedSnapshot, saveSnapshot } from '../emulator/snapshots.service.js';
import { signRequest } from '../lib/hmac.js';
import { loadFixtures, validateFixtures } from '../fixtures/fixtures.loader.js';
import type { Fixtures } from '../fixtures/fixtures.schema.js';
import type { AppContext } from '../context.js';

// The in-process test kit (docs/test-kit.md#in-process-test-kit): one line starts a sandbox on a random port with a
// webhook receiver attached, for tap, vitest, jest or node:test suites.
//
//   const sandbox = await startSandbox();
//   const res = await sandbox.signedFetch('GET', '/v1/accounts');
//   await sandbox.close();

export interface SandboxCredentials {
  programmeId: string;
  single: { apiKey: string; secret: string; userId: string };
  multi: { apiKey: string; secret: string };
  webhook: { apiKey: string; secret: string };
}

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  rawBody: string;
  body: { transaction: Record<string, unknown>; metadata: Record<string, unknown> };
  receivedAt: number;
}

export interface SandboxOptions {
  /** A fixtures object or a path to a fixtures file (default: the bundled default fixtures). */
  fixtures?: Fixtures | string;
  /** `realtime` or an ISO instant to start frozen (default: real time, or the clock stored in `db`). */
  clock?: string;
  /** Port to listen on (default: a random free port). */
  port?: number;
  /** Seed for ids (default: the emulator's default seed). */
  seed?: string;
  /** Database path (default `:memory:`). */
  db?: string;
}

export interface Sandbox {
  url: string;
  credentials: SandboxCredentials;
  /** HMAC-signed fetch; `user` sets X-Service-User-Id and switches to the MULTI_USER key. */
  signedFetch(method: string, path: string, body?: unknown, options?: { user?: string; apiKey?: string; secret?: string }): Promise<Response>;
  /** Advance the emulated clock, running every job due by then (rail steps, reviews, retries). */
  advanceClock(ms: number): Promise<void>;
  /** Back to the fixtures (and the start clock); forgets received webhooks. */
  reset(): Promise<void>;
  /** Save the whole state under a name (docs/control-plane.md#snapshots); the same name again replaces it. */
  snapshot(name: string): Promise<void>;
  /** Bring a saved state back, its clock included; forgets received webhooks, as reset does. */
  restore(name: string): Promise<void>;
  webhooks: {
    received(): ReceivedWebhook[];
    waitFor(predicate: (webhook: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook>;
    clear(): void;
  };
  /** The running server's context (database, clock) for advanced assertions. */
  context: AppContext;
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const received: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  const receiver = await startReceiver((webhook) => {
    received.push(webhook);
    for (const wake of waiters) wake();
  });
  const receiverPort = (receiver.address() as AddressInfo).port;
  const fixtures =
    options.fixtures === undefined ? undefined : typeof options.fixtures === 'string' ? loadFixtures(options.fixtures) : validateFixtures(options.fixtures);
  let server: RunningServer;
  try {
    server = await startServer({
      config: {
        port: options.port ?? 0,
        host: '127.0.0.1',
        db: options.db ?? ':memory:',
        clock: options.clock,
        seed: options.seed,
        logLevel: 'silent',
        webhookUrl: `http://127.0.0.1:${receiverPort}/webhooks`,
      } as never,
      fixtures,
    });
  } catch (error) {
    receiver.close();
    throw error;
  }
  const ctx = server.ctx;
  const programme = ctx.fixtures.programmes[0]!;
  const single = programme.apiKeys.find((key) => key.integrationType === 'SINGLE_USER');
  const multi = programme.apiKeys.find((key) => key.integrationType === 'MULTI_USER');
  const credentials: SandboxCredentials = {
    programmeId: programme.id,
    single: { apiKey: single?.apiKey ?? '', secret: single?.secret ?? '', userId: single?.userId ?? '' },
    multi: { apiKey: multi?.apiKey ?? '', secret: multi?.secret ?? '' },
    webhook: { apiKey: programme.webhook.apiKey, secret: programme.webhook.secret },
  };

  async function signedFetch(method: string, path: string, body?: unknown, opts: { user?: string; apiKey?: string; secret?: string } = {}): Promise<Response> {
    const useMulti = opts.user !== undefined && !opts.apiKey;
    const apiKey = opts.apiKey ?? (useMulti ? credentials.multi.apiKey : credentials.single.apiKey);
    const secret = opts.secret ?? (useMulti ? credentials.multi.secret : credentials.single.secret);
    const payload = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const timestamp = String(Date.now());
    const headers: Record<string, string> = {
      'X-Service-Api-Key': apiKey,
      'X-Service-Timestamp': timestamp,
      'X-Service-Program-Id': credentials.programmeId,
      'X-Service-Signature': signRequest({ apiKey, secret, timestamp, method, target: path, body: payload }),
    };
    if (opts.user) headers['X-Service-User-Id'] = opts.user;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    return fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : payload });
  }

  return {
    url: server.url,
    credentials,
    signedFetch,
    async advanceClock(ms) {
      advanceClock(ctx, ms);
    },
    async reset() {
      resetSandbox(ctx);
      received.length = 0;
    },
    async snapshot(name) {
      saveSnapshot(ctx, name);
    },
    async restore(name) {
      restoreNamedSnapshot(ctx, name);
      received.length = 0;
    },
    webhooks: {
      received: () => [...received],
      clear: () => {
        received.length = 0;
      },
      waitFor(predicate, timeoutMs = 5000) {
        return new Promise((resolve, reject) => {
          const check = () => {
            const found = received.find(predicate);
            if (found) {
              cleanup();
              resolve(found);
            }
          };
          const timer = setTimeout(() => {
            cleanup();
            reject(new Error(`no matching webhook within ${timeoutMs} ms (received ${received.length})`));
          }, timeoutMs);
          const cleanup = () => {
            clearTimeout(timer);
            waiters.delete(check);
          };
          waiters.add(check);
          check();
        });
      },
    },
    context: ctx,
    async close() {
      await server.close();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    },
  };
}

function startReceiver(onWebhook: (webhook: ReceivedWebhook) => void): Promise<Server> {
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: ReceivedWebhook['body'];
      try {
        body = JSON.parse(rawBody) as ReceivedWebhook['body'];
      } catch {
        response.writeHead(400).end();
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value;
      onWebhook({ path: request.url ?? '/', headers, rawBody, body, receivedAt: Date.now() });
      response.writeHead(204).end();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}
