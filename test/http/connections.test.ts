import t from 'tap';
import net from 'node:net';
import type { Socket } from 'node:net';
import { buildTestApp } from '../helper.js';
import { snapshotUploadsReceiving } from '../../src/emulator/snapshots.routes.js';
import { connectionCap, MAX_CONNECTIONS } from '../../src/http/connection-limits.js';

// docs/robustness.md#connections: a request must arrive in full within the request timeout; answers and event streams
// are not timed; connections past the cap are closed unanswered. Real listeners and raw sockets; the timeout is
// shortened to 200 ms, and every wait is on an event (a close, an answer), bounded only to fail instead of hanging.

const TIMEOUT_MS = 200;
const BOUND_MS = 30_000; // generous: a loaded machine is slow, never wrong

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${BOUND_MS} ms`)), BOUND_MS);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

/** Listen, and keep the server's side of every connection so a test can wait for the server to close one. */
async function listen(sandbox: TestApp): Promise<{ port: number; base: string; serverSockets: Socket[]; accepted(count: number): Promise<void> }> {
  const serverSockets: Socket[] = [];
  const waiters: Array<() => void> = [];
  sandbox.app.server.on('connection', (socket: Socket) => {
    serverSockets.push(socket);
    for (const wake of waiters.splice(0)) wake();
  });
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const accepted = async (count: number) => {
    while (serverSockets.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { port, base: `http://127.0.0.1:${port}`, serverSockets, accepted };
}

interface Raw {
  socket: Socket;
  /** Everything the server sent, once the connection closed. */
  closed: Promise<string>;
}

/** A raw connection that writes `text` and keeps reading until the connection closes. */
function raw(port: number, text: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined); // a reset is a close too; what was received is checked
    const closed = new Promise<string>((done) => socket.once('close', () => done(received)));
    socket.once('connect', () => {
      socket.write(text);
      resolve({ socket, closed });
    });
    socket.once('error', reject);
  });
}

function serverClosed(socket: Socket): Promise<void> {
  return socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()));
}

function bodyOf(answer: string): { message: string; errorCode?: string } {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { message: string; errorCode?: string };
}

t.test('a request whose body never completes is answered 408 and its connection closed', async (t) => {
  const sandbox = await buildTestApp({ limits: { requestTimeoutMs: TIMEOUT_MS } });
  t.teardown(sandbox.close);
  const { port, serverSockets, accepted } = await listen(sandbox);
  const partial = [
    ['Content-Length: 100, 1 byte sent', 'POST /_emulator/clock HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{'],
    ['a chunked body without its last chunk', 'POST /_emulator/clock HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n'],
    [
      'a snapshot upload of 1 MiB, 10 bytes sent',
      `PUT /_emulator/snapshots/partial HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${1024 * 1024}\r\n\r\n0123456789`,
    ],
  ] as const;
  for (const [index, [what, text]] of partial.entries()) {
    const client = await raw(port, text);
    await within(accepted(index + 1), `${what}: accepted`);
    const answer = await within(client.closed, what);
    t.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/, `${what}: 408`);
    t.match(answer, /\r\nconnection: close\r\n/i);
    const body = bodyOf(answer);
    t.equal(body.errorCode, 'INVALID_REQUEST', `${what}: the error body`);
    t.equal(body.message, `The request did not arrive in full within ${TIMEOUT_MS} ms; send it again`);
    await within(serverClosed(serverSockets[index]!), `${what}: the server's side closed`);
  }
  t.equal(snapshotUploadsReceiving(), 0, 'the upload ended by the timeout gave its place back');
  const clock = await sandbox.app.inject({ method: 'GET', url: '/_emulator/clock' });
  t.equal(clock.json().now, '2026-03-01T12:00:00.000Z', 'none of the partial requests reached its handler');
});

t.test('answers and event streams are not timed: only receiving the request is', async (t) => {
  const sandbox = await buildTestApp({ limits: { requestTimeoutMs: TIMEOUT_MS } });
  t.teardown(sandbox.close);
  const { port, base, serverSockets, accepted } = await listen(sandbox);

  const dashboard = await openEvents(`${base}/_emulator/ui/events`);
  t.teardown(dashboard.close);
  await within(dashboard.next('event: ready', 0), 'the dashboard stream is ready');
  const relay = await openEvents(`${base}/_emulator/webhooks/listen/stream?forwardTo=${encodeURIComponent('http://127.0.0.1:9/hooks')}`);
  t.teardown(relay.close);
  await within(relay.next('event: ready', 0), 'the listen stream is ready');

  // A request whose body never comes, started after both streams: once the server has closed it, a whole timeout has
  // passed since both streams began.
  const before = serverSockets.length;
  const client = await raw(port, 'POST /_emulator/clock HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
  await within(accepted(before + 1), 'accepted');
  t.match(await within(client.closed, 'the partial request'), /^HTTP\/1\.1 408 /);

  const seen = dashboard.text().length;
  const advanced = await fetch(`${base}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"advanceMs":1000}' });
  t.equal(advanced.status, 200);
  await within(dashboard.next('event: changed', seen), 'the dashboard stream still delivers');
  const status = (await (await fetch(`${base}/_emulator/webhooks/listen`)).json()) as { connected: boolean };
  t.equal(status.connected, true, 'the listen relay is still connected');
  t.equal(relay.ended(), false);

  // An answer that takes longer than the timeout (a latency fault of 1 s against 200 ms) is answered in full.
  const rule = await fetch(`${base}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ match: { path: '/v1/accounts' }, effect: { type: 'latency', ms: 1000 } }),
  });
  t.equal(rule.status, 201);
  const slow = await fetch(`${base}/v1/accounts`, { headers: sandbox.sign('GET', '/v1/accounts') });
  t.equal(slow.status, 200, 'a slow answer is not cut');
});

t.test('connections past the cap are closed unanswered; a closed one makes room', async (t) => {
  const sandbox = await buildTestApp({ limits: { maxConnections: 2 } });
  t.teardown(sandbox.close);
  const { port, base, serverSockets, accepted } = await listen(sandbox);
  let dropped = 0;
  sandbox.app.server.on('drop', () => (dropped += 1));
  const first = await raw(port, '');
  const second = await raw(port, '');
  await within(accepted(2), 'two connections accepted');
  const third = await raw(port, 'GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  t.equal(await within(third.closed, 'the third connection'), '', 'closed without an answer');
  t.equal(dropped, 1, 'Node dropped it');
  t.equal(serverSockets.length, 2, 'never handed to the HTTP server');

  first.socket.destroy();
  await within(serverClosed(serverSockets[0]!), 'the server saw the first close');
  const health = await raw(port, 'GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  t.match(await within(health.closed, 'a request once there is room'), /^HTTP\/1\.1 200 /);
  second.socket.destroy();
  t.ok(base);
});

t.test('the connection cap fits the open-file limit', async (t) => {
  t.equal(connectionCap(null), MAX_CONNECTIONS, 'no known limit: the default');
  t.equal(connectionCap(1_048_576), MAX_CONNECTIONS);
  t.equal(connectionCap(20_000), MAX_CONNECTIONS);
  t.equal(connectionCap(4096), 2048, 'half a low limit');
  t.equal(connectionCap(1024), 512);
});

t.test('snapshot uploads being received at once are capped: one more is a 429 with Retry-After, before its body is read', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { port, base } = await listen(sandbox);
  const head = (name: string) =>
    `PUT /_emulator/snapshots/${name} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\nSQLite`;
  const first = await raw(port, head('one'));
  const second = await raw(port, head('two'));
  await within(waitFor(() => snapshotUploadsReceiving() === 2), 'both uploads being received');

  const refused = await fetch(`${base}/_emulator/snapshots/three`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: 'not a snapshot' });
  t.equal(refused.status, 429);
  t.equal(refused.headers.get('retry-after'), '1');
  t.equal(refused.headers.get('connection'), 'close', 'its body is not drained: the connection closes');
  const body = (await refused.json()) as { message: string; errorCode: string };
  t.equal(body.errorCode, 'TOO_MANY_REQUESTS');
  t.equal(body.message, '2 snapshot uploads are already being received; send this one again once one of them is in');
  t.equal(snapshotUploadsReceiving(), 2, 'a refusal takes no place');
  // refused for what they are, not for the places: checked before a place is asked for
  const tooLarge = await raw(port, `PUT /_emulator/snapshots/huge HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${512 * 1024 * 1024 + 1}\r\n\r\n`);
  t.match(await within(tooLarge.closed, 'the 413'), /^HTTP\/1.1 413 /, 'a file past 512 MiB is a 413 while both places are taken');
  const json = await fetch(`${base}/_emulator/snapshots/json`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.equal(json.status, 415, 'a JSON body is a 415 while both places are taken');
  t.equal(snapshotUploadsReceiving(), 2);

  first.socket.destroy();
  await within(waitFor(() => snapshotUploadsReceiving() === 1), 'the abandoned upload gave its place back');
  const next = await fetch(`${base}/_emulator/snapshots/four`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: 'not a snapshot' });
  t.equal(next.status, 400, 'received and checked (and refused as no snapshot file)');
  t.equal(snapshotUploadsReceiving(), 1, 'a received upload gave its place back');
  second.socket.destroy();
  await within(waitFor(() => snapshotUploadsReceiving() === 0), 'all places given back');
});

t.test('an upload refused before its body is read (413, 415) is answered at once, holds no place and closes its connection', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { port } = await listen(sandbox);
  const cases = [
    { what: 'a text body', status: 415, type: 'text/plain', length: 64 * 1024 * 1024 },
    { what: 'a JSON body', status: 415, type: 'application/json', length: 64 * 1024 * 1024 },
    { what: 'a Content-Length past the 512 MiB limit', status: 413, type: 'application/octet-stream', length: 512 * 1024 * 1024 + 1 },
  ];
  for (const { what, status, type, length } of cases) {
    // the head and a few bytes of a large body; the rest never comes
    const upload = await raw(port, `PUT /_emulator/snapshots/big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\nSQLite`);
    const answer = await within(upload.closed, `${what}: the connection to close`);
    t.match(answer, new RegExp(`^HTTP/1.1 ${status} `), `${what}: ${status}`);
    t.match(answer, /\r\nconnection: close\r\n/i, `${what}: the rest of the body is not waited for`);
    await within(waitFor(() => snapshotUploadsReceiving() === 0), `${what}: the place given back`);
    t.equal(snapshotUploadsReceiving(), 0, `${what}: no place held while the client still has bytes to send`);
  }
});

/** Wait until `condition` holds, looking again after each turn of the event loop's timers. */
async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

interface Events {
  text(): string;
  /** Resolves once `needle` appears after character `from`. */
  next(needle: string, from: number): Promise<void>;
  ended(): boolean;
  close(): void;
}

async function openEvents(url: string): Promise<Events> {
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  if (response.status !== 200 || !response.body) throw new Error(`${url}: ${response.status}`);
  let text = '';
  let done = false;
  const waiters: Array<() => void> = [];
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += chunk.value;
        for (const wake of waiters.splice(0)) wake();
      }
    } catch {
      // aborted by close()
    }
    done = true;
    for (const wake of waiters.splice(0)) wake();
  })();
  return {
    text: () => text,
    async next(needle, from) {
      while (!text.slice(from).includes(needle)) {
        if (done) throw new Error(`${url} ended before "${needle}"`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    ended: () => done,
    close: () => controller.abort(),
  };
}
