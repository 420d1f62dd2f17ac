import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { createContext, type ContextOptions } from './create-context.js';
import { runDueJobs, startSchedulerTimer } from './scheduler/scheduler.js';
import { backgroundServices } from './domains/index.js';

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  url: string;
  close(): Promise<void>;
}

/** Open the database, build the app, listen, and start the scheduler and background services. */
export async function startServer(options: ContextOptions & { config: Partial<Config> }): Promise<RunningServer> {
  const ctx = createContext(options);
  const app = await buildApp(ctx);
  const stoppers: Array<() => void | Promise<void>> = [];
  for (const service of backgroundServices) stoppers.push(service(ctx, app));
  stoppers.push(startSchedulerTimer(ctx));
  runDueJobs(ctx);
  await app.listen({ port: ctx.config.port, host: ctx.config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : ctx.config.port;
  const host = ctx.config.host === '0.0.0.0' || ctx.config.host === '::' ? '127.0.0.1' : ctx.config.host;
  let closed = false;
  return {
    app,
    ctx,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    async close() {
      if (closed) return;
      closed = true;
      for (const stop of stoppers) await stop();
      await app.close();
      if (!options.db) ctx.db.close();
    },
  };
}
