import { deliveryTransportSlot } from './webhooks.transport.js';
import type { DomainDescriptor } from '../domain.js';
import { webhooksDocument } from './webhooks.openapi.js';
import { WEBHOOK_RETRY_JOB, runWebhookRetry, sessionWebhookUrlSlot } from './webhooks.service.js';
import { dispatcherSlot, webhookDispatcherService } from './webhooks.dispatcher.js';
import { notifyOutbox, outboxSlot } from './outbox.js';
import { senderSlot } from './webhooks.sender.js';
import { deliveryInterceptorSlot } from './webhooks.interceptor.js';

export const webhooksDomain: DomainDescriptor = {
  name: 'webhooks',
  jobs: { [WEBHOOK_RETRY_JOB]: runWebhookRetry },
  services: [webhookDispatcherService],
  state: [outboxSlot, senderSlot, dispatcherSlot, deliveryInterceptorSlot, deliveryTransportSlot, sessionWebhookUrlSlot],
  // a job may have made a delivery due (a `webhook.retry`, an event written by a rail step): wake the dispatcher
  afterJobsRan: notifyOutbox,
  // the transaction webhook in the OpenAPI document (docs/openapi.md#what-each-area-adds)
  openapi: webhooksDocument,
};
