import type { DeliveryTransport } from '../domains/webhooks/webhooks.transport.js';

// The webhook receiver of scenarios the server plays (docs/scenarios.md#format, `webhooks: { receiver: true }`):
// `service-sandbox run` starts a receiver of its own; a session the server starts from a file has this one instead.
// Attempts to its URL never leave the process: the sandbox's delivery transport answers them 204 at once, as a
// receiver that acknowledges everything would. The host is under `.invalid` (RFC 2606), so the URL reaches nothing
// if it is ever used outside the sandbox that set it.

export const SCENARIO_RECEIVER_URL = 'http://scenario-receiver.invalid/webhooks';

/** `transport`, with attempts to the scenario receiver's URL answered 204 in process. */
export function withScenarioReceiver(transport: DeliveryTransport): DeliveryTransport {
  return {
    carries(ctx, url) {
      return url === SCENARIO_RECEIVER_URL || transport.carries(ctx, url);
    },
    send(ctx, attempt, options) {
      if (attempt.url !== SCENARIO_RECEIVER_URL) return transport.send(ctx, attempt, options);
      return Promise.resolve({ outcome: 'SUCCEEDED', responseStatus: 204, responseBody: '', error: null, latencyMs: 0 });
    },
  };
}
