import t from 'tap';
import { startServer } from '../../src/server.js';
import { MAX_STREAMS } from '../../src/emulator/dashboard.events.js';
import { buildTestApp, START } from '../helper.js';

// GET /_emulator/ui/events (docs/dashboard.md#live-updates): the dashboard's server-sent event stream, over a real
// listener (a stream that stays open is not something app.inject can read).

interface Stream {
  /** Every event seen so far, in order. */
  events: Array<{ event: string; data: string; at: number }>;
  status: number;
  headers: Headers;
  /** Resolves with the first event named `name` after index `from`. */
  next(name: string, from: number, timeoutMs?: number): Promise<{ event: string; data: string; at: number }>;
  ended: Promise<void>;
  close(): void;
}

async function openStream(url: string, headers: Record<string, string> = {}): Promise<Stream> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  const events: Stream['events'] = [];
  const waiters: Array<() => void> = [];
  let ended: Promise<void> = Promise.resolve();
  if (response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    ended = (async () => {
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += value;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const fields = Object.fromEntries(block.split('\n').filter((line) => !line.startsWith(':')).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
            if (fields.event) events.push({ event: fields.event, data: fields.data ?? '', at: performance.now() });
            for (const wake of waiters.splice(0)) wake();
          }
        }
      } catch {
        // aborted by close()
      }
    })();
  }
  const next: Stream['next'] = async (name, from, timeoutMs = 30_000) => { // generous: a loaded machine is slow, never wrong
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = events.slice(from).find((event) => event.event === name);
      if (found) return found;
      if (performance.now() > deadline) throw new Error(`no "${name}" event within ${timeoutMs} ms (saw ${JSON.stringify(events.map((event) => event.event))})`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  };
  return { events, status: response.status, headers: response.headers, next, ended, close: () => controller.abort() };
}

async function listen(sandbox: Awaited<ReturnType<typeof buildTestApp>>): Promise<string> {
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

t.test('the stream says ready, then changed after a clock move and after a write, quickly', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const base = await listen(sandbox);
  const stream = await openStream(`${base}/_emulator/ui/events`);
  t.teardown(() => stream.close());
  t.equal(stream.status, 200);
  t.match(stream.headers.get('content-type'), /^text\/event-stream/, 'an event stream');
  t.equal(stream.headers.get('cache-control'), 'no-cache');
  const ready = await stream.next('ready', 0);
  t.equal(JSON.parse(ready.data).now, START, 'the first event says ready, with the emulated time');

  // nothing changes: no notice
  await new Promise((resolve) => setTimeout(resolve, 400));
  t.equal(stream.events.filter((event) => event.event === 'changed').length, 0, 'no notice while nothing changes');

  // a clock move through the control plane
  let from = stream.events.length;
  const sent = performance.now();
  const moved = await fetch(`${base}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceMs: 60_000 }) });
  const answered = performance.now();
  t.equal(moved.status, 200);
  const changed = await stream.next('changed', from);
  t.equal(JSON.parse(changed.data).now, '2026-03-01T12:01:00.000Z', 'the notice carries the new emulated time');
  // The server checks every WATCH_MS (100 ms); under the load of a shared CI machine allow some slack.
  // a figure, not an assertion: the machine may be loaded (bench/ measures speed)
  const latency = changed.at - answered;
  t.comment(`SSE latency after a clock move: ${latency.toFixed(1)} ms after its answer, ${(changed.at - sent).toFixed(1)} ms after it was sent`);

  // one notice per change, not a flood
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(stream.events.slice(from).filter((event) => event.event === 'changed').length, 1, 'one notice for one change');

  // a write through the API (a deposit) is a change too
  from = stream.events.length;
  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '10.00' });
  t.equal(deposit.statusCode, 202);
  await stream.next('changed', from);
  t.pass('a deposit pushed a notice');

  // freezing a frozen clock at another time
  from = stream.events.length;
  t.equal((await sandbox.request('POST', '/_emulator/reset')).statusCode, 200);
  await stream.next('changed', from);
  t.pass('a reset pushed a notice');
});

t.test('bad queries are refused with the error body; the stream stays out of the journal', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const bad = await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui/events?since=1' });
  t.equal(bad.statusCode, 400, 'unknown query parameters are refused');
  t.match(bad.json(), { message: /since/ });
  const base = await listen(sandbox);
  const stream = await openStream(`${base}/_emulator/ui/events`);
  await stream.next('ready', 0);
  stream.close();
  const journal = await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests' });
  t.notOk(JSON.stringify(journal.json()).includes('/_emulator/ui/events'), 'not recorded in the request journal');
});

t.test('with an admin token the stream needs it (the page then polls)', async (t) => {
  const sandbox = await buildTestApp({ config: { adminToken: 'let-me-in' } });
  t.teardown(sandbox.close);
  const base = await listen(sandbox);
  const denied = await openStream(`${base}/_emulator/ui/events`);
  t.equal(denied.status, 401, 'refused without the token');
  const allowed = await openStream(`${base}/_emulator/ui/events`, { 'x-admin-token': 'let-me-in' });
  t.equal(allowed.status, 200, 'open with it');
  await allowed.next('ready', 0);
  allowed.close();
});

t.test(`at most ${MAX_STREAMS} streams per sandbox; a closed one frees its place`, async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const base = await listen(sandbox);
  const streams: Stream[] = [];
  for (let index = 0; index < MAX_STREAMS; index += 1) streams.push(await openStream(`${base}/_emulator/ui/events`));
  t.ok(streams.every((stream) => stream.status === 200), `${MAX_STREAMS} open`);
  const refused = await openStream(`${base}/_emulator/ui/events`);
  t.equal(refused.status, 429, 'one more is refused');
  t.equal(refused.headers.get('retry-after'), '1', 'with a Retry-After (docs/errors.md#retry-after)');
  streams.pop()!.close();
  // the server sees the close on its next write or at once from the socket; give it a moment
  let again: Stream | null = null;
  for (let tries = 0; tries < 400 && again?.status !== 200; tries += 1) { // a generous bound for a loaded machine
    await new Promise((resolve) => setTimeout(resolve, 50));
    again = await openStream(`${base}/_emulator/ui/events`);
  }
  t.equal(again?.status, 200, 'a place was freed');
  streams.push(again!);
  for (const stream of streams) stream.close();
});

t.test('a session has its own stream; ending the session and closing the server end the streams', async (t) => {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as never });
  let closed = false;
  t.teardown(async () => {
    if (!closed) await server.close();
  });
  const created = await fetch(`${server.url}/_emulator/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const session = (await created.json()) as { id: string; baseUrl: string };
  const other = await fetch(`${server.url}/_emulator/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const otherSession = (await other.json()) as { id: string; baseUrl: string };

  const root = await openStream(`${server.url}/_emulator/ui/events`);
  const mine = await openStream(`${session.baseUrl}/_emulator/ui/events`);
  const theirs = await openStream(`${otherSession.baseUrl}/_emulator/ui/events`);
  await Promise.all([root.next('ready', 0), mine.next('ready', 0), theirs.next('ready', 0)]);

  const from = { root: root.events.length, mine: mine.events.length, theirs: theirs.events.length };
  await fetch(`${session.baseUrl}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceMs: 1000 }) });
  await mine.next('changed', from.mine);
  t.pass("the session's stream heard its clock move");
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(theirs.events.slice(from.theirs).length, 0, "another session's stream heard nothing");
  t.equal(root.events.slice(from.root).filter((event) => event.event === 'changed').length, 0, "nor did the root's");

  const ending = await fetch(`${server.url}/_emulator/sessions/${session.id}`, { method: 'DELETE' });
  t.equal(ending.status, 204);
  await mine.ended;
  t.pass("ending the session ended its stream");

  const started = performance.now();
  await server.close();
  closed = true;
  const closeMs = performance.now() - started;
  await Promise.all([root.ended, theirs.ended]);
  t.comment(`the server closed with two streams open in ${closeMs.toFixed(0)} ms`); // closing at all is the proof
});
