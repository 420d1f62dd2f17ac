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

/**
 * Real ms a stopping server waits for open requests before it closes their connections (docs/decisions.md#shutdown):
 * idle keep-alive connections are closed at once; a request held open (a latency fault, an SSE stream, a client that
 * never reads) cannot keep the process alive past this.
 */
export const SHUTDOWN_GRACE_MS = 2000;

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
    close: async () => {
      app.server.closeIdleConnections();
      const force = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      force.unref();
      try {
        await root.close();
      } finally {
        clearTimeout(force);
      }
    },
  };
}
