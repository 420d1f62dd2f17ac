import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import tap, { type Test } from 'tap';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Config } from '../../src/config.js';
import { verifyWebhookSignature } from '../../src/webhook-verify.js';
import { CREDENTIALS, START } from '../helper.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { call, signed } from '../helpers/http-client.js';
import { CLI, ensureBuilt } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';

// `service-sandbox listen --forward-to URL` (docs/webhooks.md#listen), the built CLI against a real server: the app's
// receiver is reached by the CLI only (every request it gets is one the CLI printed; the emulator is never given a
// way to it but the relay), each delivery verifies, refusals are retried on the schedule, the delivery log matches,
// nothing connected means failed attempts that are retried later, and the receiver check passes through it.

async function serve(config: Partial<Config> = {}): Promise<RunningServer> {
  return startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START, ...config } as never });
}

interface Listening {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  stop(): Promise<number | null>;
}

/** Start `service-sandbox listen` and wait for its Ready line. */
async function listen(t: Test, args: string[]): Promise<Listening> {
  const child = spawn(...plainNode([CLI, 'listen', ...args]), { stdio: ['pipe', 'pipe', 'pipe'] }) as ChildProcessWithoutNullStreams;
  const lines: string[] = [];
  let buffer = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening: Listening = {
    child,
    lines,
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      return exited;
    },
  };
  t.teardown(() => listening.stop());
  await until(() => lines.some((line) => line.startsWith('Ready:')), () => `the Ready line (stderr: ${errors})`);
  return listening;
}

async function until(check: () => boolean, what: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function verified(receiver: Receiver): boolean[] {
  return receiver.requests.map((request) =>
    verifyWebhookSignature({
      apiKey: request.headers['x-service-api-key'] as string,
      secret: CREDENTIALS.webhook.secret,
      timestamp: request.headers['x-service-timestamp'] as string,
      signature: request.headers['x-service-signature'] as string,
      path: new URL(request.url, 'http://x').pathname,
      rawBody: request.rawBody,
    }),
  );
}

async function deposit(baseUrl: string, amount: string): Promise<string> {
  const answer = await signed(baseUrl, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount });
  if (answer.status !== 202) throw new Error(answer.text);
  return answer.headers.get('location')!.split('/').pop()!;
}

tap.test('listen: every delivery of a session reaches the app through the CLI, verified, retried, logged', async (t) => {
  await ensureBuilt();
  const app = await startReceiver({ path: '/webhooks/app' });
  t.teardown(() => app.close());
  const server = await serve();
  t.teardown(() => server.close());
  const created = await call(`${server.url}/_emulator/sessions`, 'POST', { label: 'listen-test' });
  const base = created.body.baseUrl as string;

  const cli = await listen(t, ['--forward-to', app.url, '--url', server.url, '--session', created.body.id]);
  const status = await call(`${base}/_emulator/webhooks/listen`);
  t.match(status.body, { forwardTo: app.url, connected: true, waiting: 0 });
  t.equal((await call(`${base}/_emulator/webhooks/endpoint?programId=prg_sandbox`)).body.endpoints[0].url, app.url, 'the endpoint is the forward-to URL');

  // The app refuses its first delivery: the attempt is FAILED with its status and retried on the schedule.
  app.answer = (_request, index) => (index === 0 ? { status: 503, body: 'not yet' } : 200);
  const id = await deposit(base, '31.00');
  t.equal((await call(`${base}/_emulator/settle`, 'POST', {})).body.settled, true);
  t.equal((await call(`${base}/_emulator/clock`, 'POST', { advanceMs: 5000 })).status, 200); // the retry, and the deposit completes
  const settled = (await call(`${base}/_emulator/settle`, 'POST', {})).body;
  t.equal(settled.settled, true);
  t.equal(settled.waiting.deliveries, 0, 'nothing waits');

  t.same(
    app.requests.map((request) => `${request.body.transaction.id} ${request.body.transaction.status}`),
    [`${id} PENDING`, `${id} PENDING`, `${id} COMPLETED`],
    'the refused event again, then the next one',
  );
  t.same(verified(app), [true, true, true], 'each verifies, signed for the forward-to path');
  const printed = cli.lines.filter((line) => line.includes(' -> '));
  t.equal(printed.length, app.requests.length, 'the app got exactly what the CLI forwarded: nothing came another way');
  t.match(printed[0], /transaction_\w+\s+evt_\S+\s+-> 503\s+[\d.]+ ms/, 'one line per delivery: time, event type, event id, status, latency');

  const log = (await call(`${base}/_emulator/webhooks/deliveries?sortDirection=ASC`)).body.data;
  t.same(log.map((delivery: { status: string }) => delivery.status), ['DELIVERED', 'DELIVERED']);
  const first = log[0];
  t.same(first.attempts.map((attempt: { responseStatus: number }) => attempt.responseStatus), [503, 200], 'the log has both attempts with the app\'s statuses');
  t.equal(first.attempts[0].responseBody, 'not yet', 'and the app\'s answer');
  t.equal(first.attempts[0].error, 'receiver answered 503; any 2xx acknowledges', 'worded as a direct delivery\'s');
  const sent = app.requests[0]!;
  for (const [name, value] of Object.entries(first.attempts[0].requestHeaders as Record<string, string>)) {
    t.equal(sent.headers[name.toLowerCase()], value, `the app got the logged ${name}`);
  }
  t.equal(sent.rawBody.toString('utf8'), first.attempts[0].requestBody, 'and the logged bytes');

  // The receiver check goes through the relay too.
  const check = await call(`${base}/_emulator/webhooks/check`, 'POST', { url: app.url });
  t.equal(check.status, 200, check.text);
  t.equal(check.body.cases.length, 8);
  t.ok(check.body.cases.every((item: { got: { status: number | null } }) => item.got.status !== null), 'every case got an answer from the app, through the CLI');
  t.ok(app.requests.some((request) => request.url.includes('?')), 'the query-string case kept its query');
});

tap.test('listen: without a listener, attempts fail as to an unreachable URL and are retried once one connects', async (t) => {
  await ensureBuilt();
  const app = await startReceiver({ path: '/hooks' });
  t.teardown(() => app.close());
  const server = await serve();
  t.teardown(() => server.close());

  const cli = await listen(t, ['--forward-to', app.url, '--url', server.url]);
  t.equal(await cli.stop(), 0, 'Ctrl+C ends it with 0');
  const gone = await call(`${server.url}/_emulator/webhooks/listen`);
  t.match(gone.body, { forwardTo: app.url, connected: false });

  const id = await deposit(server.url, '32.00');
  const report = (await call(`${server.url}/_emulator/settle`, 'POST', {})).body;
  t.match(report.waiting.items[0], { transactionId: id, status: 'RETRYING', attempts: 1 });
  const delivery = (await call(`${server.url}/_emulator/webhooks/deliveries?transactionId=${id}`)).body.data[0];
  t.match(delivery.attempts[0].error, /no listener connected/, 'the attempt failed, saying why');
  t.equal(app.requests.length, 0, 'and the emulator did not go to the app itself');

  await listen(t, ['--forward-to', app.url, '--url', server.url]);
  t.equal((await call(`${server.url}/_emulator/clock`, 'POST', { advanceMs: 5000 })).status, 200);
  t.equal((await call(`${server.url}/_emulator/settle`, 'POST', {})).body.settled, true);
  t.same(app.requests.map((request) => request.body.transaction.status), ['PENDING', 'COMPLETED'], 'the retry went through the new listener, then the next event');

  t.equal((await call(`${server.url}/_emulator/webhooks/listen`, 'DELETE')).status, 204);
  t.match((await call(`${server.url}/_emulator/webhooks/listen`)).body, { forwardTo: null, connected: false });
});

tap.test('listen: a listener whose session ends exits 2 with one line, without connecting again', async (t) => {
  await ensureBuilt();
  const app = await startReceiver({ path: '/hooks' });
  t.teardown(() => app.close());
  const server = await serve();
  t.teardown(() => server.close());
  const created = await call(`${server.url}/_emulator/sessions`, 'POST', { label: 'listen-ends' });
  const cli = await listen(t, ['--forward-to', app.url, '--url', server.url, '--session', created.body.id, '--json']);
  let stderr = '';
  cli.child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => cli.child.once('exit', (code) => resolve(code)));
  t.equal((await call(`${server.url}/_emulator/sessions/${created.body.id}`, 'DELETE')).status, 204);
  t.equal(await exited, 2, 'exit 2: the session is gone');
  t.same(stderr.trim().split('\n'), [`service-sandbox listen: session ${created.body.id} has ended (or never existed): its webhooks are no longer forwarded`], 'one line, no "connecting again", no 404');
});

tap.test('listen: bad usage and refusals exit 2 with one line', async (t) => {
  await ensureBuilt();
  const server = await serve();
  t.teardown(() => server.close());
  const cases: Array<[string[], RegExp]> = [
    [[], /--forward-to is required/],
    [['--forward-to', 'ftp://x'], /accepts an http:\/\/ or https:\/\/ URL/],
    [['--forward-to', 'http://127.0.0.1:9/h', '--session', 'bad id!'], /--session "bad id!"/],
    [['--forward-to', 'http://127.0.0.1:9/h', '--url', server.url, '--session', 'ses_0000000000000000'], /session ses_0000000000000000 has ended \(or never existed\)/],
    [['--forward-to', 'http://127.0.0.1:9/h', '--colour', 'blue'], /unknown argument --colour/],
  ];
  for (const [args, expected] of cases) {
    const child = spawn(...plainNode([CLI, 'listen', ...args]), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    t.equal(code, 2, `exit 2: ${args.join(' ')}`);
    t.match(stderr, expected);
    t.equal(stderr.trim().split('\n').length, 1, 'one line');
  }
  const refused = await call(`${server.url}/_emulator/webhooks/listen/stream?forwardTo=ftp://x`);
  t.equal(refused.status, 400);
  t.equal(refused.body.validationErrors[0].fieldRef, 'forwardTo');
  const late = await call(`${server.url}/_emulator/webhooks/listen/lst_9/results`, 'POST', { attemptId: 'att_1', status: 200, latencyMs: 1 });
  t.equal(late.status, 404, 'a report no attempt waits for');
  const bad = await call(`${server.url}/_emulator/webhooks/listen/lst_9/results`, 'POST', { attemptId: 'att_1', status: 99, latencyMs: -1 });
  t.equal(bad.status, 400);
});
