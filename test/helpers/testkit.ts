import { verifyWebhookSignature } from '../../src/index.js';
import type { ReceivedWebhook } from '../../src/testkit/start-sandbox.js';

export function checkWebhookSignatureForTest(webhook: ReceivedWebhook, key: { apiKey: string; secret: string }): boolean {
  return Boolean(
    verifyWebhookSignature({
      apiKey: key.apiKey,
      secret: key.secret,
      timestamp: webhook.headers['x-service-timestamp']!,
      path: webhook.path,
      rawBody: webhook.rawBody,
      signature: webhook.headers['x-service-signature']!,
      toleranceMs: 300_000,
    }),
  );
}
