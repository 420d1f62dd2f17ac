import t from 'tap';
import { advance, buildTestApp, json, START } from '../helper.js';
import { backgroundServices } from '../../src/modules.js';
import { startReceiver } from '../helpers/receiver.js';

// GET /_emulator/transactions/{id}/story and the feed's selected.story (docs/dashboard.md#the-story-of-a-transaction):
// status steps on the emulated clock, ledger entries, webhook deliveries with their attempts.

async function get(sandbox: Awaited<ReturnType<typeof buildTestApp>>, url: string) {
  const response = await sandbox.app.inject({ method: 'GET', url });
  return { status: response.statusCode, body: json(response) };
}

t.test('a deposit: created PENDING, COMPLETED 1 s later, its credit entry, two delivered webhooks', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url } });
  const stoppers = backgroundServices.map((service) => service(sandbox.ctx));
  t.teardown(async () => {
    for (const stop of stoppers) await stop();
    await sandbox.close();
  });
  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '42.00' });
  t.equal(deposit.statusCode, 202);
  const id = /txn_[A-Za-z0-9]+/.exec(json(deposit).message as string)![0];

  let story = (await get(sandbox, `/_emulator/transactions/${id}/story`)).body;
  t.match(story, { transactionId: id, status: 'PENDING', final: false });
  t.same(story.steps.map((step: { kind: string; status: string; at: string }) => [step.kind, step.status, step.at]), [['CREATED', 'PENDING', START]], 'created, pending');
  t.same(story.ledgerEntries, [], 'an incoming deposit posts nothing while it is pending');

  await advance(sandbox, 1000);
  for (let tries = 0; tries < 600; tries += 1) { // a generous bound (30 s) for a loaded machine
    story = (await get(sandbox, `/_emulator/transactions/${id}/story`)).body;
    if (story.deliveries.length === 2 && story.deliveries.every((delivery: { status: string }) => delivery.status === 'DELIVERED')) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.match(story, { status: 'COMPLETED', final: true });
  t.same(
    story.steps.map((step: { kind: string; status: string; at: string; eventId: string }) => [step.kind, step.status, step.at]),
    [
      ['CREATED', 'PENDING', START],
      ['STATUS', 'COMPLETED', '2026-03-01T12:00:01.000Z'],
    ],
    'each status with its emulated time',
  );
  t.ok(story.steps.every((step: { eventId: string }) => /^evt_/.test(step.eventId)), 'each step names its event');
  t.equal(story.ledgerEntries.length, 1, 'the credit posted on completion');
  t.match(story.ledgerEntries[0], { accountId: 'acct_acme_usd', kind: 'PRINCIPAL', amount: '42.00', currency: 'USD', fee: false, postedAt: '2026-03-01T12:00:01.000Z' });
  t.same(story.deliveries.map((delivery: { eventType: string }) => delivery.eventType), ['transaction_created', 'transaction_status_updated'], 'deliveries in event order');
  t.same(story.deliveries.map((delivery: { eventId: string }) => delivery.eventId), story.steps.map((step: { eventId: string }) => step.eventId), 'one delivery per step');
  t.match(story.deliveries[0].attempts[0], { number: 1, kind: 'SCHEDULED', outcome: 'SUCCEEDED', responseStatus: 200 });

  // the feed brings the same story along with the selected transaction
  const feed = (await get(sandbox, `/_emulator/ui/state?limit=1&selected=${id}`)).body;
  t.same(feed.selected.story, { final: story.final, steps: story.steps, ledgerEntries: story.ledgerEntries }, 'the feed carries the story');
  const gone = (await get(sandbox, '/_emulator/ui/state?limit=1&selected=txn_gone')).body;
  t.equal(gone.selected.story, null, 'null for an unknown transaction');
});

t.test('a forced failure: the status code is in the step; seeded history has one step; unknown ids are 404', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '5.00' });
  const id = /txn_[A-Za-z0-9]+/.exec(json(deposit).message as string)![0];
  await advance(sandbox, 250);
  const forced = await sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${id}/status`, payload: { status: 'FAILED', statusCode: 'RAIL_REJECTED' } });
  t.equal(forced.statusCode, 200, forced.body);
  const story = (await get(sandbox, `/_emulator/transactions/${id}/story`)).body;
  t.match(story, { status: 'FAILED', final: true });
  const last = story.steps[story.steps.length - 1];
  t.match(last, { kind: 'STATUS', status: 'FAILED', statusCode: 'RAIL_REJECTED', at: '2026-03-01T12:00:00.250Z' });
  t.equal(story.deliveries.length, story.steps.length, 'a delivery per step (recorded SKIPPED: no webhook URL)');
  t.ok(story.deliveries.every((delivery: { status: string; attempts: unknown[] }) => delivery.status === 'SKIPPED' && delivery.attempts.length === 0));

  const seeded = await get(sandbox, '/_emulator/transactions/txn_hist_acme_usd_001/story');
  t.equal(seeded.status, 200);
  t.equal(seeded.body.steps.length, 1, 'seeded history: one step from the row');
  t.match(seeded.body.steps[0], { kind: 'CREATED', eventId: null });
  t.equal(seeded.body.final, true);

  const missing = await get(sandbox, '/_emulator/transactions/txn_nope/story');
  t.equal(missing.status, 404);
  t.match(missing.body, { message: 'Transaction txn_nope not found', errorCode: 'NOT_FOUND' });
  const bad = await sandbox.app.inject({ method: 'GET', url: '/_emulator/transactions/x/story?extra=1' });
  t.equal(bad.statusCode, 400, 'unknown query parameters are refused');
});

t.test('with an admin token the story needs it', async (t) => {
  const sandbox = await buildTestApp({ config: { adminToken: 'let-me-in' } });
  t.teardown(sandbox.close);
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/transactions/txn_hist_acme_usd_001/story' })).statusCode, 401);
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/transactions/txn_hist_acme_usd_001/story', headers: { 'x-admin-token': 'let-me-in' } })).statusCode, 200);
});
