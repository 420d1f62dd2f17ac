import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildTestApp, json } from '../../helper.js';
import { createTestDeposit } from '../../helpers/receiver.js';
import { startWebhookDispatcher } from '../../../src/domains/webhooks/webhooks.dispatcher.js';
import { waitUntil } from '../../helpers/wait.js';

// docs/webhooks.md#reset: an attempt on the wire when the sandbox is reset or restored finishes unrecorded, even when a
// delivery of the new state has its id; the new delivery is sent as its own. (Found by a hostile-client trial: the old
// attempt's 200 marked the new delivery DELIVERED, never sent, and settle saw nothing waiting.)

interface Held {
  url: string;
  /** Bodies received, in order. */
  bodies: Array<{ eventId: string; amount: string }>;
  /** Answer the first request (held until now) with 200. */
  release(): void;
  close(): Promise<void>;
}

/** A receiver that holds its first request until release(), and answers every later one with 200 at once. */
async function heldReceiver(): Promise<Held> {
  const bodies: Held['bodies'] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      bodies.push({ eventId: body.metadata.eventId, amount: body.transaction.creditAmount });
      const answer = () => response.writeHead(200).end('ok');
      if (bodies.length === 1) void released.then(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    bodies,
    release,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const rewind of ['reset', 'restore'] as const) {
  t.test(`${rewind}: the attempt on the wire is not recorded against the new delivery with its id`, async (t) => {
    const receiver = await heldReceiver();
    const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url } });
    const dispatcher = startWebhookDispatcher(sandbox.ctx);
    t.teardown(async () => {
      receiver.release();
      await dispatcher.stop();
      await receiver.close();
      await sandbox.close();
    });
    const inject = (method: 'GET' | 'POST', url: string, payload?: object) => sandbox.app.inject({ method, url, ...(payload ? { payload } : {}) });
    if (rewind === 'restore') t.equal((await inject('POST', '/_emulator/snapshots', { name: 'before' })).statusCode, 201);

    createTestDeposit(sandbox.ctx, 100n); // 1.00 USD
    await waitUntil(() => receiver.bodies.length === 1, 'the first event on the wire');
    const [onTheWire] = json(await inject('GET', '/_emulator/webhooks/deliveries')).data as Array<{ id: string; eventId: string }>;

    const rewound = rewind === 'reset' ? await inject('POST', '/_emulator/reset', {}) : await inject('POST', '/_emulator/snapshots/before/restore');
    t.equal(rewound.statusCode, 200, rewound.body.slice(0, 200));
    createTestDeposit(sandbox.ctx, 200n); // 2.00 USD: ids repeat after the rewind, amounts tell the two apart
    const [fresh] = json(await inject('GET', '/_emulator/webhooks/deliveries')).data as Array<{ id: string; eventId: string; status: string }>;
    t.equal(fresh!.id, onTheWire!.id, 'the new state drew the same delivery id (the case this guards)');

    receiver.release(); // the old attempt's 200 arrives now
    await waitUntil(() => receiver.bodies.length >= 2, 'the new delivery sent as its own');
    await dispatcher.drain();
    const delivery = json(await inject('GET', `/_emulator/webhooks/deliveries/${fresh!.id}`));
    t.equal(delivery.status, 'DELIVERED');
    t.equal(delivery.attempts.length, 1, 'one attempt recorded: its own');
    t.equal(JSON.parse(delivery.attempts[0].requestBody).transaction.creditAmount, '2.00', 'the recorded attempt sent the new deposit');
    t.same(receiver.bodies.map((body) => body.amount), ['1.00', '2.00'], 'the receiver got the old event once, then the new one');
  });
}
