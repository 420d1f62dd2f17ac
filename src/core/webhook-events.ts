// The webhook event types the service sends (docs/webhooks.md): the domain that records them and the scenario files
// that wait for them (docs/scenarios.md#the-control-plane-actions) name the same list.
export const WEBHOOK_EVENT_TYPES = ['transaction_created', 'transaction_status_updated'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
