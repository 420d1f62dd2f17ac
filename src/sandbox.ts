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

export function openSandbox(options: ContextOptions): Sandbox {
  const ctx = createContext(options);
  const stoppers: Array<() => void | Promise<void>> = [];
  for (const service of backgroundServices) stoppers.push(service(ctx));
  stoppers.push(startSchedulerTimer(ctx));
  runDueJobs(ctx);
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
