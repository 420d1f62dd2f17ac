import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.js';
import type { JobFailureHandler, JobHandler } from '../scheduler/scheduler.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import type { DocumentPart } from '../http/openapi-document.js';

/**
 * A long-running piece of a sandbox, started when the sandbox opens (the root or a session) and stopped when it
 * closes; returns its stop function. It gets the sandbox's context only: sandboxes share one app
 * (docs/architecture.md#the-request-path).
 */
export type BackgroundService = (ctx: AppContext) => () => void | Promise<void>;

/**
 * What one module (a /v1 domain, the control plane, faults) adds to the app: its route modules (registered in this
 * order), its job handlers by job type, its background services, and the in-memory state it owns. The app's own list,
 * `src/modules.ts`, names every descriptor once.
 */
export interface DomainDescriptor {
  name: string;
  /** Registered once for every sandbox: handlers read theirs from the request (`ctxOf(request)`, src/http/request-sandbox.ts). */
  routes?: FastifyPluginAsyncZod[];
  jobs?: Record<string, JobHandler>;
  /** What a job's failure does to what it works on, by job type (docs/decisions.md#failed-jobs). */
  jobFailures?: Record<string, JobFailureHandler>;
  services?: BackgroundService[];
  /**
   * The runtime slots the module owns (docs/architecture.md#runtime): how each starts, what reset does to it,
   * whether snapshots carry it, what a new session starts with. Each slot is declared by exactly one module.
   */
  state?: Array<StateSlot<any>>;
  /** Called after the scheduler ran jobs, outside their transactions (the webhooks module wakes its dispatcher). */
  afterJobsRan?: (ctx: AppContext) => void;
  /**
   * Called once when a sandbox's context is created, after every slot exists: where a module registers what it adds
   * to another one without that one importing it (faults: the webhook delivery interceptor).
   */
  wire?: (ctx: AppContext) => void;
  /**
   * What the module adds to the OpenAPI document that its route schemas cannot say (its parameters' meaning, its ids'
   * prefixes, headers, bodies read raw, the webhook): src/http/openapi-document.ts assembles the parts and knows no
   * domain (docs/openapi.md#what-each-area-adds).
   */
  openapi?: DocumentPart;
}
