import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Config } from '../../src/config.js';
import {
  checkWebhookSignature,
  createSandboxClient,
  WebhookForwardingError,
  type ForwardingReady,
  type SandboxClient,
  type WebhookEvent,
} from '../../src/client/index.js';
import { START } from '../helper.js';

// The kit's webhook forwarding (docs/clients.md#forwarding) as a team uses it: an app under test with its own webhook
// endpoint (a plain node:http server that verifies each delivery with the kit's verifier and the session's webhook
// secret, and dedupes on the event id) receives a session's deliveries through client.forwardWebhooks; no CLI process,
// and the emulator is never given the app's URL but through the relay. Then a reset (the forwarder connects again),
// the session's end (it ends by itself, saying so), an AbortSignal, `await using`, and the admin token.

async function serve(t: Test, config: Partial<Config> = {}): Promise<RunningServer> {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START, ...config } as never });
  t.teardown(() => server.close());
  return server;
}

/** The app under test: POST /hooks/payments, verified (401 when not genuine), each event kept once. */
async function startApp(t: Test, secret: () => { apiKey: string; secret: string }) {
  const events: WebhookEvent[] = [];
  const refused: string[] = [];
  const seen = new Set<string>();
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const key = secret();
      const verdict = checkWebhookSignature({
        apiKey: request.headers['x-service-api-key'] === key.apiKey ? key.apiKey : '',
        secret: key.secret,
        timestamp: request.headers['x-service-timestamp'] as string | undefined,
        signature: request.headers['x-service-signature'] as string | undefined,
        path: new URL(request.url ?? '/', 'http://app').pathname,
        rawBody,
      });
      if (request.method !== 'POST' || request.url !== '/hooks/payments' || !verdict.valid) {
        refused.push(verdict.valid ? `${request.method} ${request.url}` : verdict.reason);
        response.writeHead(401).end();
        return;
      }
      const event = JSON.parse(rawBody.toString('utf8')) as WebhookEvent;
      if (!seen.has(event.metadata.eventId)) {
        seen.add(event.metadata.eventId);
        events.push(event);
      }
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/payments`, events, refused };
}

async function deposit(client: SandboxClient, amount: string): Promise<string> {
  const answer = await client.api.POST('/v1/sandbox/accounts/{accountId}/deposits', {
    params: { path: { accountId: 'acct_acme_usd' } },
    body: { depositInstructionId: 'di_acme_usd_ach', amount },
  });
  if (answer.response.status !== 202) throw new Error(`deposit: ${answer.response.status}`);
  return answer.response.headers.get('location')!.split('/').pop()!;
}

/** The next `ready` a forwarder reports, as a promise. */
function readyEvents() {
  const waiting: Array<(ready: ForwardingReady) => void> = [];
  return {
    onReady: (ready: ForwardingReady) => waiting.splice(0).forEach((wake) => wake(ready)),
    next: () => new Promise<ForwardingReady>((resolve) => waiting.push(resolve)),
  };
}

t.test("a session's webhooks reach the app under test through the kit's forwarding: verified, then again after a reset, until the session ends", async (t) => {
  const server = await serve(t);
  const root = createSandboxClient({ baseUrl: server.url });
  const session = await root.createSession({ label: 'kit-forwarding' });
  const sandbox = root.forSession(session);
  t.equal(sandbox.session?.id, session.id, 'the session client knows its session');
  const app = await startApp(t, () => session.credentials.webhook);
  const readies = readyEvents();

  const forwarder = await sandbox.forwardWebhooks(app.url, { onReady: readies.onReady });
  t.match(forwarder.listenerId, /^lst_/, 'resolved once the relay is ready');
  t.match(await sandbox.listenStatus(), { forwardTo: app.url, connected: true });
  t.equal(session.webhookUrl, null, 'the emulator was never given the app\'s URL but through the relay');

  const first = await deposit(sandbox, '12.00');
  await sandbox.advanceClock(3_600_000);
  await sandbox.settleUntilIdle();
  t.same(app.events.map((event) => `${event.transaction.id} ${event.transaction.status}`), [`${first} PENDING`, `${first} COMPLETED`], 'each event once, in order');
  t.same(app.refused, [], 'every delivery verified with the kit\'s verifier, signed for the app\'s path');
  const log = await sandbox.webhookDeliveries({ sortDirection: 'ASC' });
  t.same(log.data.map((delivery) => delivery.status), ['DELIVERED', 'DELIVERED'], 'the delivery log has the app\'s answers');

  // A reset ends the stream; the forwarder connects again by itself and points the reset sandbox at the app again.
  const again = readies.next();
  await sandbox.reset();
  t.equal((await again).reconnected, true, 'connected again after the reset');
  const second = await deposit(sandbox, '13.00');
  await sandbox.settleUntilIdle();
  t.ok(app.events.some((event) => event.transaction.id === second), 'deliveries after the reset reach the app');

  // The session ends: the forwarder ends by itself, with one message, and nothing rejects unhandled.
  await root.endSession(session.id);
  const end = await forwarder.ended;
  t.same(end, { reason: 'session-ended', message: `session ${session.id} has ended (or never existed): its webhooks are no longer forwarded` });
  t.same(await forwarder.stop(), end, 'stop() afterwards answers the same end');
  const gone = await sandbox.forwardWebhooks(app.url).catch((error: unknown) => error);
  t.ok(gone instanceof WebhookForwardingError && gone.code === 'SESSION_ENDED', 'forwarding an ended session is one clear error');
  t.match((gone as Error).message, `session ${session.id} has ended`);
});

t.test('on the root sandbox: stopped by an AbortSignal or `await using`; the admin token is kept', async (t) => {
  const server = await serve(t, { adminToken: 'forwarding-token' });
  const root = createSandboxClient({ baseUrl: server.url, adminToken: 'forwarding-token' });
  const app = await startApp(t, () => ({ apiKey: server.ctx.fixtures.programmes[0]!.webhook.apiKey, secret: server.ctx.fixtures.programmes[0]!.webhook.secret }));

  const refused = await createSandboxClient({ baseUrl: server.url })
    .forwardWebhooks(app.url)
    .catch((error: unknown) => error);
  t.ok(refused instanceof WebhookForwardingError && refused.code === 'REFUSED' && refused.status === 401, 'without the admin token the relay refuses');

  const controller = new AbortController();
  const forwarder = await root.forwardWebhooks(app.url, { signal: controller.signal });
  const id = await deposit(root, '14.00');
  await root.settle();
  t.same(app.events.map((event) => event.transaction.id), [id], 'the root sandbox\'s webhook went through the relay with the admin token');
  controller.abort();
  t.same(await forwarder.ended, { reason: 'stopped', message: `stopped forwarding the webhooks of ${server.url} to ${app.url}` });
  t.match(await root.listenStatus(), { connected: false }, 'the stream is closed');

  {
    await using scoped = await root.forwardWebhooks(app.url);
    t.match(await root.listenStatus(), { connected: true, listenerId: scoped.listenerId });
  }
  t.match(await root.listenStatus(), { connected: false }, '`await using` stopped it at the end of the block');

  const aborted = new AbortController();
  aborted.abort(new Error('not now'));
  await t.rejects(root.forwardWebhooks(app.url, { signal: aborted.signal }), /not now/, 'an aborted signal rejects with its reason');
});

// docs/clients.md#forwarding: as direct delivery (src/lib/http-post.ts), the app's status decides and at most the first
// 2 KiB of its body are read; the connection is then let go. An app that sends 200 and then stalls, or whose body never
// ends, is DELIVERED through forwarding as it is when the emulator reaches it directly (it was a timeout, or the whole
// body was read first).
t.test("the app's status decides: a body that stalls or never ends is not waited for", async (t) => {
  const server = await serve(t, { webhookTimeoutMs: 4_000 });
  const root = createSandboxClient({ baseUrl: server.url });
  const closed: Array<Promise<void>> = [];
  const app = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      closed.push(new Promise((resolve) => response.once('close', () => resolve())));
      if (request.url === '/stall') {
        response.writeHead(200, { 'content-length': '1000' }).write('ten bytes.'); // and the other 990 never come
        return;
      }
      // an endless body: written as long as the connection is open
      response.writeHead(200, { 'content-type': 'text/plain' });
      const more = () => {
        while (!response.destroyed && response.write('x'.repeat(16 * 1024)));
        if (!response.destroyed) response.once('drain', more);
      };
      more();
    });
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (app.closeAllConnections(), app.close(() => resolve()))));
  const appBase = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;

  for (const [path, body] of [
    ['/stall', 'ten bytes.'],
    ['/endless', 'x'.repeat(2048)],
  ] as const) {
    const sandbox = root.forSession(await root.createSession({ label: 'kit-forwarding-answers' }));
    const forwarder = await sandbox.forwardWebhooks(`${appBase}${path}`);
    t.teardown(() => forwarder.stop());
    await deposit(sandbox, '7.00');
    await sandbox.settle(); // answers once the app's answer was reported
    const log = await sandbox.webhookDeliveries();
    t.match(log.data, [{ status: 'DELIVERED', attempts: [{ responseStatus: 200, responseBody: body, error: null }] }], `${path}: DELIVERED, its first bytes kept`);
    t.equal(log.data[0]?.attempts.length, 1, `${path}: one attempt`);
  }
  await Promise.all(closed); // the app holds both answers open: only the forwarder closing them ends these
  t.equal(closed.length, 2, 'the forwarder let go of both answers it did not read to the end');
  await root.endSessions('kit-forwarding-answers');
});
