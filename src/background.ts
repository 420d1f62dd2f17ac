import type { FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';
import { webhookDispatcherService } from './domains/webhooks/webhooks.dispatcher.js';
import { clockHighWaterService } from './emulator/clock.high-water.js';

// Long-running services started with the server (for example the webhook dispatcher). Each returns its
// stop function. A domain adds its own line here.
export type BackgroundService = (ctx: AppContext, app: FastifyInstance) => () => void | Promise<void>;

export const backgroundServices: BackgroundService[] = [webhookDispatcherService, clockHighWaterService];
