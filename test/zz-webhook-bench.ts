import { buildTestApp } from './helper.js';
import { createTestDeposit, startReceiver } from './helpers/receiver.js';
import { startWebhookDispatcher } from '../src/domains/webhooks/webhooks.dispatcher.js';
import { dueDeliveryIds } from '../src/domains/webhooks/webhooks.service.js';
const receiver = await startReceiver();
const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url } });
sandbox.ctx.db.transaction(() => { for (let i = 0; i < 1000; i++) createTestDeposit(sandbox.ctx, BigInt(100 + i)); })();
let t0 = performance.now();
for (let i = 0; i < 200; i++) dueDeliveryIds(sandbox.ctx, 16);
console.log('due query x200', (performance.now() - t0).toFixed(1));
for (const c of [Number(process.argv[2] ?? 8)]) {
  const d = startWebhookDispatcher(sandbox.ctx, { concurrency: c });
  t0 = performance.now();
  await d.drain({ timeoutMs: 60000 });
  console.log('concurrency', c, (performance.now() - t0).toFixed(0), 'ms', receiver.requests.length);
  await d.stop();
}
await receiver.close(); await sandbox.close();
