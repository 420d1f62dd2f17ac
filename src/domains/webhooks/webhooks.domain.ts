import type { DomainDescriptor } from '../domain.js';
import { WEBHOOK_RETRY_JOB, runWebhookRetry } from './webhooks.service.js';
import { webhookDispatcherService } from './webhooks.dispatcher.js';

export const webhooksDomain: DomainDescriptor = {
  name: 'webhooks',
  jobs: { [WEBHOOK_RETRY_JOB]: runWebhookRetry },
  services: [webhookDispatcherService],
};
