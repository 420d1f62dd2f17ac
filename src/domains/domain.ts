import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.js';
import type { JobFailureHandler, JobHandler } from '../scheduler/scheduler.js';

/** A long-running service started with the server; returns its stop function. */
export type BackgroundService = (ctx: AppContext, app: FastifyInstance) => () => void | Promise<void>;

/**
 * What one domain adds to the app: its route modules (registered in this order), its job handlers by job
 * type, and its background services. `src/domains/index.ts` lists every descriptor once.
 */
export interface DomainDescriptor {
  name: string;
  routes?: Array<(ctx: AppContext) => FastifyPluginAsyncZod>;
  jobs?: Record<string, JobHandler>;
  /** What a job's failure does to what it works on, by job type (docs/decisions.md#failed-jobs). */
  jobFailures?: Record<string, JobFailureHandler>;
  services?: BackgroundService[];
}
