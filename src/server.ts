import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import type { ContextOptions } from './create-context.js';
import { buildApp } from './app.js';
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

/** Open the root sandbox, the registry of its sessions and the one app that serves them all, and listen. */
export async function startServer(options: ContextOptions & { config: Partial<Config> }): Promise<RunningServer> {
  const root = openSandbox(options);
  const { ctx } = root;
  const sessions = createSessionRegistry(ctx, openSandbox);
  let app: FastifyInstance;
  try {
    app = await buildApp(ctx, { sessions });
  } catch (error) {
    await sessions.close();
    await root.close();
    throw error;
  }
  // the root's streams end first (its background services), then the app closes (sessions end before it: src/app.ts)
  // docs/decisions.md#shutdown: idle connections close at once, open requests get SHUTDOWN_GRACE_MS
  const close = async () => {
    app.server.closeIdleConnections();
    const force = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    force.unref();
    try {
      await root.close(() => app.close());
    } finally {
      clearTimeout(force);
    }
  };
  try {
    await app.listen({ port: ctx.config.port, host: ctx.config.host });
  } catch (error) {
    await close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : ctx.config.port;
  const host = ctx.config.host === '0.0.0.0' || ctx.config.host === '::' ? '127.0.0.1' : ctx.config.host;
  return {
    app,
    ctx,
    sessions,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close,
  };
}
