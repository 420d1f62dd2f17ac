import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildAppOptions } from './app.js';
import type { AppContext } from './context.js';
import { createContext, type ContextOptions } from './create-context.js';
import { runDueJobs, startSchedulerTimer } from './scheduler/scheduler.js';
import { backgroundServices } from './modules.js';

/**
 * One whole sandbox, not yet listening: its context (database, clock, ids), its app, and what runs beside
 * them (the webhook dispatcher, the clock's high-water mark, the scheduler timer). The server's root sandbox is
 * one; every session is another (docs/sessions.md#what-a-session-is).
 */
export interface Sandbox {
  ctx: AppContext;
  app: FastifyInstance;
  /** Stop the background services and the app; close the database unless it was given. */
  close(): Promise<void>;
}

export async function openSandbox(options: ContextOptions, appOptions: BuildAppOptions = {}): Promise<Sandbox> {
  const ctx = createContext(options);
  if (appOptions.yieldBetweenSteps) await new Promise<void>((resolve) => setImmediate(resolve));
  let app: FastifyInstance;
  try {
    app = await buildApp(ctx, appOptions);
  } catch (error) {
    if (!options.db) ctx.db.close();
    throw error;
  }
  const stoppers: Array<() => void | Promise<void>> = [];
  for (const service of backgroundServices) stoppers.push(service(ctx, app));
  stoppers.push(startSchedulerTimer(ctx));
  runDueJobs(ctx);
  let closed = false;
  return {
    ctx,
    app,
    async close() {
      if (closed) return;
      closed = true;
      for (const stop of stoppers) await stop();
      await app.close();
      if (!options.db) ctx.db.close();
    },
  };
}
