import type { Db } from './db/connection.js';
import type { Clock } from './lib/clock.js';
import type { IdSource } from './lib/ids.js';
import type { Config } from './config.js';
import type { Fixtures } from './fixtures/fixtures.schema.js';
import { errors } from './core/errors.js';
import type { SandboxRuntime } from './runtime/sandbox-runtime.js';

/**
 * Everything a domain function needs, injected
 * (docs/architecture.md#the-shape-in-one-paragraph: ctx = { db, clock, ids, config }).
 */
export interface AppContext {
  db: Db;
  clock: Clock;
  ids: IdSource;
  config: Config;
  fixtures: Fixtures;
  /** Handlers of deferred jobs by type (each module's descriptor, src/modules.ts). */
  jobHandlers: Record<string, (ctx: AppContext, payload: Record<string, unknown>) => void>;
  /**
   * What to do, by job type, when a job's handler throws (`jobFailures` of each domain's descriptor): for example
   * move the job's transaction to FAILED (docs/decisions.md#failed-jobs). Absent: the job is only recorded FAILED.
   */
  jobFailureHandlers?: Record<string, (ctx: AppContext, payload: Record<string, unknown>, error: string) => void>;
  /**
   * Called after the scheduler ran jobs (each descriptor's `afterJobsRan`: the outbox wakes its subscriber, since a
   * job may have made a delivery due), so the scheduler names no domain (docs/architecture.md#runtime).
   */
  afterJobsRan?: (ctx: AppContext) => void;
  /** Everything the sandbox holds in memory outside its database, slot by slot (docs/architecture.md#runtime). */
  runtime: SandboxRuntime;
}

/** Decimal places of a currency (docs/decisions.md#exact-money); unknown currencies are a 400 naming the field. */
export function precisionOf(ctx: AppContext, currency: string, fieldRef = 'currency'): number {
  const entry = ctx.fixtures.currencies[currency];
  if (!entry) {
    throw errors.field('InvalidValue', fieldRef, `Unknown currency "${currency}"; supported: ${Object.keys(ctx.fixtures.currencies).join(', ')}`);
  }
  return entry.precision;
}
