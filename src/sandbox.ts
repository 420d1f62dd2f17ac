import type { AppContext } from './context.js';
import { createContext, type ContextOptions } from './create-context.js';
import { runDueJobs, startSchedulerTimer } from './scheduler/scheduler.js';
import { backgroundServices } from './modules.js';

/**
 * One sandbox: its context (database, clock, ids, runtime) and what runs beside it (the webhook dispatcher, the
 * clock's high-water mark, the scheduler timer, the ends of its streams). No app: every sandbox is served by the
 * server's one app, which finds the sandbox of each request before routing (docs/architecture.md#the-request-path).
 * The server's root sandbox is one; every session is another (docs/sessions.md#what-a-session-is).
 */
export interface Sandbox {
  ctx: AppContext;
  /** Stop the background services, wait for `drained` if given, then close the database unless it was given. */
  close(drained?: () => Promise<void>): Promise<void>;
}

export interface SandboxOptions extends ContextOptions {
  /**
   * Leave the jobs already due to the scheduler's first pass instead of running them before this answers: a session
   * opened from a snapshot's image, whose clock is set to the snapshot's instant only after (docs/sessions.md#how-fast).
   */
  dueJobsLater?: boolean;
}

export function openSandbox(options: SandboxOptions): Sandbox {
  const ctx = createContext(options);
  const stoppers: Array<() => void | Promise<void>> = [];
  for (const service of backgroundServices) stoppers.push(service(ctx));
  stoppers.push(startSchedulerTimer(ctx));
  if (!options.dueJobsLater) runDueJobs(ctx);
  let closed = false;
  return {
    ctx,
    async close(drained) {
      if (closed) return;
      closed = true;
      for (const stop of stoppers) await stop();
      if (drained) await drained();
      if (!options.db) ctx.db.close();
    },
  };
}
