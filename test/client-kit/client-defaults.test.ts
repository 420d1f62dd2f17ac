import { createServer, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Config } from '../../src/config.js';
import {
  createSandboxClient,
  DEFAULT_SESSION_CLOCK,
  DEFAULT_TIMEOUT_MS,
  forwardWebhooks,
  NotSettledError,
  SandboxTimeoutError,
  VERSION,
  VERSION_WARNING_CODE,
} from '../../src/client/index.js';

// The client's defaults, shared with the other kits (docs/clients.md#typescript): sessions frozen at
// DEFAULT_SESSION_CLOCK unless a clock is given; settle throws NotSettledError (the report on it) when the sandbox did
// not settle in time; an AbortSignal cancels a call that waits; the server's version is read once per server URL and a
// mismatch is one process warning.

async function serve(t: Test, config: Partial<Config> = {}): Promise<RunningServer> {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: 'realtime', ...config } as never });
  t.teardown(() => server.close());
  return server;
}

/** The process warnings of our code emitted while `body` runs (and the ticks after it). */
async function warningsDuring(body: () => Promise<void>): Promise<Error[]> {
  const seen: Error[] = [];
  const listener = (warning: Error & { code?: string }) => {
    if (warning.code === VERSION_WARNING_CODE) seen.push(warning);
  };
  process.on('warning', listener);
  try {
    await body();
    await new Promise((resolve) => setImmediate(resolve)); // emitWarning emits on a later tick
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

t.test('sessions start frozen at the shared default instant, unless a clock is given', async (t) => {
  const server = await serve(t);
  const root = createSandboxClient({ baseUrl: server.url });
  const frozen = root.forSession(await root.createSession({ label: 'defaults' }));
  t.match(await frozen.clock(), { now: DEFAULT_SESSION_CLOCK, mode: 'frozen' }, `frozen at ${DEFAULT_SESSION_CLOCK}`);
  const real = root.forSession(await root.createSession({ label: 'defaults', clock: 'realtime' }));
  t.match(await real.clock(), { mode: 'realtime' }, "clock: 'realtime' gives the real clock");
  await root.endSessions('defaults');
});

t.test('settle throws NotSettledError with the report when the timeout passes first; AbortSignal cancels', async (t) => {
  // an app that does not answer until the test is done: the delivery stays on the wire
  const held: ServerResponse[] = [];
  const hanging = createServer((_request, response) => void held.push(response));
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (hanging.closeAllConnections(), hanging.close(() => resolve()))));
  const server = await serve(t);
  const root = createSandboxClient({ baseUrl: server.url });
  const session = await root.createSession({ label: 'settle-error', webhookUrl: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hooks` });
  const sandbox = root.forSession(session);
  const deposit = await sandbox.api.POST('/v1/sandbox/accounts/{accountId}/deposits', {
    params: { path: { accountId: 'acct_acme_usd' } },
    body: { depositInstructionId: 'di_acme_usd_ach', amount: '5.00' },
  });
  t.equal(deposit.response.status, 202);

  const error = await sandbox.settle({ timeoutMs: 50 }).catch((caught: unknown) => caught);
  t.ok(error instanceof NotSettledError, 'a NotSettledError');
  t.match((error as NotSettledError).report, { settled: false, waiting: { items: [{ onTheWire: true }] } }, 'the report is on the error');
  t.match((error as Error).message, /did not settle within the timeout/);
  await t.rejects(sandbox.settleUntilIdle({ timeoutMs: 50 }), NotSettledError, 'settleUntilIdle too');

  const controller = new AbortController();
  controller.abort();
  await t.rejects(sandbox.settle({ signal: controller.signal }), { name: 'AbortError' }, 'an aborted signal cancels the call');
  for (const response of held) response.writeHead(200).end();
  await root.endSession(session.id);
});

t.test('a server of another version: one process warning per server URL', async (t) => {
  const other = createServer((request, response) => {
    if (request.url === '/_emulator/health') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', now: DEFAULT_SESSION_CLOCK, version: '0.0.1' }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ now: DEFAULT_SESSION_CLOCK, mode: 'frozen' }));
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => other.close(() => resolve())));
  const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;

  const warnings = await warningsDuring(async () => {
    const client = createSandboxClient({ baseUrl: url });
    await client.clock();
    await client.clock();
    await createSandboxClient({ baseUrl: `${url}/_sessions/ses_other` }).clock(); // the same server, through a session
  });
  t.equal(warnings.length, 1, 'once for the server URL');
  t.match(warnings[0]!.message, `service-sandbox kit ${VERSION} talks to a server of version 0.0.1 at ${url}`);

  const server = await serve(t);
  const same = await warningsDuring(async () => {
    await createSandboxClient({ baseUrl: server.url }).clock();
  });
  t.same(same, [], 'none for a server of the kit\'s version');
});

// docs/clients.md#timeouts: a server that accepts the connection and never answers fails each call after the client's
// timeoutMs (default 60 s, as Go's), with the call in the message; never undici's 300 s. A real socket that reads and
// never writes; a short configured timeout, so the test waits a fraction of a second.
t.test('a server that never answers: every call rejects with a SandboxTimeoutError after timeoutMs', async (t) => {
  const sockets = new Set<Socket>();
  const silent = createNetServer((socket) => {
    sockets.add(socket);
    socket.resume(); // read the request, answer nothing
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (sockets.forEach((socket) => socket.destroy()), silent.close(() => resolve()))));
  const baseUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;

  t.equal(DEFAULT_TIMEOUT_MS, 60_000, 'the default, as the Go kit');
  t.throws(() => createSandboxClient({ baseUrl, timeoutMs: 0 }), RangeError, 'a timeout of 0 is a mistake, not "none"');
  const root = createSandboxClient({ baseUrl, timeoutMs: 150 });
  const error = await root.createSession({ label: 'never' }).catch((caught: unknown) => caught);
  t.ok(error instanceof SandboxTimeoutError, 'createSession: a SandboxTimeoutError');
  t.match(error, { name: 'SandboxTimeoutError', timeoutMs: 150, message: new RegExp(`^POST ${baseUrl}/_emulator/sessions: no answer within 150 ms`) });
  await t.rejects(root.api.GET('/v1/accounts'), SandboxTimeoutError, 'a typed call too');
  await t.rejects(root.settle({ timeoutMs: 100 }), SandboxTimeoutError, 'a settle too (its own wait added)');
  const controller = new AbortController();
  controller.abort();
  await t.rejects(root.api.GET('/_emulator/clock', { signal: controller.signal }), { name: 'AbortError' }, "the caller's signal still cancels");
  await t.rejects(
    forwardWebhooks(baseUrl, 'http://127.0.0.1:1/hooks', { timeoutMs: 150 }),
    { name: 'WebhookForwardingError', code: 'UNREACHABLE', message: /no answer within 150 ms/ },
    'forwarding: the stream that never opens',
  );
});

t.test("settle's own wait is added to the timeout: a settle longer than timeoutMs is not cut short", async (t) => {
  const held: ServerResponse[] = [];
  const hanging = createServer((_request, response) => void held.push(response));
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (hanging.closeAllConnections(), hanging.close(() => resolve()))));
  const server = await serve(t);
  const root = createSandboxClient({ baseUrl: server.url, timeoutMs: 1_000 });
  const sandbox = root.forSession(await root.createSession({ label: 'settle-wait', webhookUrl: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hooks` }));
  const deposit = await sandbox.api.POST('/v1/sandbox/accounts/{accountId}/deposits', {
    params: { path: { accountId: 'acct_acme_usd' } },
    body: { depositInstructionId: 'di_acme_usd_ach', amount: '5.00' },
  });
  t.equal(deposit.response.status, 202);
  // the server waits 2 s for the attempt that never gets an answer, twice the client's timeout: NotSettledError,
  // the server's verdict, not a SandboxTimeoutError
  await t.rejects(sandbox.settle({ timeoutMs: 2_000 }), NotSettledError);
  for (const response of held) response.writeHead(200).end();
  await root.endSessions('settle-wait');
});
