import type { Test } from 'tap';
import { startWebhookDispatcher } from '../../src/domains/webhooks/webhooks.dispatcher.js';
import { buildTestApp } from '../helper.js';
import { startReceiver } from './receiver.js';

/**
 * A test app whose programme delivers webhooks to a real local receiver through a running dispatcher, all
 * three stopped when the test ends (the webhook suites and the OpenAPI webhook check share this setup).
 */
export async function webhookSandbox(t: Test, ...receiverOptions: Parameters<typeof startReceiver>) {
  const receiver = await startReceiver(...receiverOptions);
  const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url } });
  const dispatcher = startWebhookDispatcher(sandbox.ctx);
  t.teardown(async () => {
    await dispatcher.stop();
    await receiver.close();
    await sandbox.close();
  });
  return { receiver, sandbox, dispatcher };
}
