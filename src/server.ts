import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import type { ContextOptions } from './create-context.js';
import { openSandbox } from './sandbox.js';
import { createSessionRegistry, type SessionRegistry } from './sessions/sessions.registry.js';

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  /** The sessions served under /_sessions/{id} on the same port (docs/sessions.md). */
  sessions: SessionRegistry;
  url: string;
  close(): Promise<void>;
}

/** Open the root sandbox with its sessions and listen (the session pool is built from the first session on: docs/sessions.md#how-fast). */
export async function startServer(options: ContextOptions & { config: Partial<Config> }): Promise<RunningServer> {
  let sessions: SessionRegistry | undefined;
  const root = await openSandbox(options, {
    sessions: (ctx) => {
      sessions = createSessionRegistry(ctx, openSandbox);
      return sessions;
    },
  });
  const { app, ctx } = root;
  try {
    await app.listen({ port: ctx.config.port, host: ctx.config.host });
  } catch (error) {
    await root.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : ctx.config.port;
  const host = ctx.config.host === '0.0.0.0' || ctx.config.host === '::' ? '127.0.0.1' : ctx.config.host;
  return {
    app,
    ctx,
    sessions: sessions!,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => root.close(),
  };
}
