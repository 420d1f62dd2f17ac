import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppContext } from '../context.js';
import type { BuildAppOptions } from '../app.js';
import type { ContextOptions } from '../create-context.js';
import type { Sandbox } from '../sandbox.js';
import type { Config } from '../config.js';
import type { Fixtures } from '../fixtures/fixtures.schema.js';
import { restoreSnapshot, setStartingSnapshot, type Snapshot } from '../emulator/snapshots.service.js';
import { setWebhookEndpoint } from '../domains/webhooks/webhooks.service.js';
import { ServiceError } from '../core/errors.js';
import { enterPathPrefix } from '../http/public-url.js';

// Sessions (docs/sessions.md): whole sandboxes, each with its own in-memory database, clock, scheduler, webhook
// dispatcher, journal and snapshots, served by the root sandbox's listener under /_sessions/{id}. They share
// nothing but the process: a session's app is built by the same buildApp as the root's, around its own context.

export const SESSION_PATH = '/_sessions/';

export type OpenSandbox = (options: ContextOptions, appOptions?: BuildAppOptions) => Promise<Sandbox>;

export interface SessionOptions {
  /** Fixtures for this session instead of the server's (validated already). */
  fixtures?: Fixtures;
  /** Start from this snapshot (one saved on the root sandbox); reset goes back to it. */
  snapshot?: Snapshot;
  /** `realtime` or an ISO instant (frozen there), as `--clock`. */
  clock?: string;
  webhookUrl?: string | null;
}

export interface Session {
  id: string;
  sandbox: Sandbox;
  createdAtMs: number;
  lastUsedAtMs: number;
  /** Requests being answered right now: a session is not ended by idleness while it works. */
  inFlight: number;
  startedFrom: { fixtures: 'server' | 'given'; snapshot: string | null; clock: string };
}

export interface SessionRegistry {
  readonly limit: number;
  readonly idleTimeoutMs: number;
  create(options: SessionOptions): Promise<Session>;
  get(id: string): Session | undefined;
  list(): Session[];
  /** End a session: its requests are answered 404 from now on, and its sandbox is closed. */
  end(id: string): Promise<boolean>;
  /** Serve `req` when its path is under /_sessions/; false leaves it to the root app. */
  dispatch(req: IncomingMessage, res: ServerResponse): boolean;
  /**
   * Start building the pool of ready sessions after `delayMs` (the server calls it once it listens, a second
   * later, so the build does not hold up the first requests: docs/sessions.md#how-fast).
   */
  warm(delayMs?: number): void;
  close(): Promise<void>;
}

/** Seconds a client should wait before a new session can be created (the earliest idle expiry). */
export class SessionLimitError extends ServiceError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, 'TOO_MANY_REQUESTS', message);
  }
}

/**
 * `root` is the server's own sandbox: sessions take its configuration (an in-memory database, no webhook URL unless
 * given: docs/sessions.md#what-a-session-starts-from), its fixtures and its snapshots. `now` is the real wall
 * clock: idleness is real time, never the emulated clock.
 */
export function createSessionRegistry(root: AppContext, open: OpenSandbox, now: () => number = Date.now): SessionRegistry {
  const sessions = new Map<string, Session>();
  const ready: Sandbox[] = [];
  let creating = 0;
  let filling = false;
  let closed = false;
  let sweeper: NodeJS.Timeout | undefined;
  const limit = root.config.maxSessions;
  const idleTimeoutMs = root.config.sessionIdleTimeout * 1000;
  const sessionConfig: Partial<Config> = { ...root.config, db: ':memory:', webhookUrl: undefined };

  function openDefault(): Promise<Sandbox> {
    return open({ config: sessionConfig, fixtures: root.fixtures });
  }

  // docs/sessions.md#how-fast: building a sandbox (migrations, fixtures, every route's schemas) takes tens of
  // milliseconds; a few are built ahead, between requests, so creating a session takes one from the pool.
  function refill(): void {
    if (filling || closed || ready.length >= root.config.sessionPool) return;
    filling = true;
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- every rejection is caught inside
    setImmediate(async () => {
      try {
        const sandbox = await openDefault();
        if (closed) await sandbox.close();
        else ready.push(sandbox);
      } catch {
        // a failure here shows on the next create, which builds its own sandbox
      } finally {
        filling = false;
        if (!closed && ready.length < root.config.sessionPool) refill();
      }
    });
  }

  function startSweeper(): void {
    if (sweeper || closed) return;
    sweeper = setInterval(sweep, Math.min(Math.max(idleTimeoutMs / 4, 50), 30_000));
    sweeper.unref();
  }

  function sweep(): void {
    const at = now();
    for (const session of sessions.values()) {
      if (session.inFlight === 0 && at - session.lastUsedAtMs >= idleTimeoutMs) void end(session.id);
    }
  }

  function retryAfterSeconds(): number {
    let earliest = Infinity;
    for (const session of sessions.values()) earliest = Math.min(earliest, session.lastUsedAtMs + idleTimeoutMs);
    return Number.isFinite(earliest) ? Math.max(1, Math.ceil((earliest - now()) / 1000)) : 1;
  }

  async function sandboxFor(options: SessionOptions): Promise<Sandbox> {
    if (options.fixtures || options.clock) {
      // Another start than the pool's: a sandbox of its own (docs/sessions.md#how-fast).
      return open({
        config: { ...sessionConfig, ...(options.clock ? { clock: options.clock } : {}) },
        fixtures: options.fixtures ?? root.fixtures,
      });
    }
    const pooled = ready.pop();
    refill();
    return pooled ?? openDefault();
  }

  async function create(options: SessionOptions): Promise<Session> {
    if (closed) throw new ServiceError(503, 'INTERNAL_ERROR', 'The server is shutting down');
    if (sessions.size + creating >= limit) {
      throw new SessionLimitError(
        limit === 0
          ? 'Sessions are turned off on this server (--max-sessions 0)'
          : `${limit} ${limit === 1 ? 'session is' : 'sessions are'} live, the most this server keeps (--max-sessions); end one with DELETE /_emulator/sessions/{id} or wait for an idle one to expire`,
        retryAfterSeconds(),
      );
    }
    creating += 1;
    let sandbox: Sandbox;
    try {
      sandbox = await sandboxFor(options);
    } finally {
      creating -= 1;
    }
    try {
      if (options.snapshot) {
        setStartingSnapshot(sandbox.ctx, options.snapshot); // its reset goes back to the snapshot
        restoreSnapshot(sandbox.ctx, options.snapshot);
      }
      // A session sends only where its creator said, whatever its fixtures or snapshot name, and after every
      // reset too (docs/sessions.md#webhooks): deliveries of two sessions never reach one receiver by accident.
      sandbox.ctx.sessionWebhookUrl = options.webhookUrl ?? null;
      setWebhookEndpoint(sandbox.ctx, { url: sandbox.ctx.sessionWebhookUrl });
    } catch (error) {
      await sandbox.close();
      throw error;
    }
    const at = now();
    const session: Session = {
      id: `ses_${randomBytes(8).toString('hex')}`,
      sandbox,
      createdAtMs: at,
      lastUsedAtMs: at,
      inFlight: 0,
      startedFrom: {
        fixtures: options.fixtures ? 'given' : 'server',
        snapshot: options.snapshot?.name ?? null,
        clock: sandbox.ctx.clock.state().mode === 'frozen' ? sandbox.ctx.clock.nowIso() : 'realtime',
      },
    };
    if (closed) {
      await sandbox.close();
      throw new ServiceError(503, 'INTERNAL_ERROR', 'The server is shutting down');
    }
    sessions.set(session.id, session);
    startSweeper();
    return session;
  }

  async function end(id: string): Promise<boolean> {
    const session = sessions.get(id);
    if (!session) return false;
    sessions.delete(id);
    // Requests already inside finish first (at most a few seconds): the database stays open for them.
    for (let waited = 0; session.inFlight > 0 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    await session.sandbox.close();
    return true;
  }

  function dispatch(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? '/';
    if (!url.startsWith(SESSION_PATH)) return false;
    const afterPath = url.slice(SESSION_PATH.length);
    const cut = afterPath.search(/[/?]/);
    const id = cut === -1 ? afterPath : afterPath.slice(0, cut);
    const session = sessions.get(id);
    if (!session) {
      const shown = id.length > 80 ? `${id.slice(0, 80)}...` : id;
      const message = `No session "${shown}" on this server: it was ended, it expired after ${root.config.sessionIdleTimeout} s without requests, or it never existed (POST /_emulator/sessions creates one)`;
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ message, errorCode: 'NOT_FOUND' }));
      return true;
    }
    session.inFlight += 1;
    session.lastUsedAtMs = now();
    res.once('close', () => {
      session.inFlight -= 1;
      session.lastUsedAtMs = now();
    });
    enterPathPrefix(req, SESSION_PATH + id);
    session.sandbox.app.routing(req, res);
    return true;
  }

  return {
    limit,
    idleTimeoutMs,
    create,
    get: (id) => sessions.get(id),
    list: () => [...sessions.values()].sort((a, b) => a.createdAtMs - b.createdAtMs || a.id.localeCompare(b.id)),
    end,
    dispatch,
    warm(delayMs = 0) {
      if (delayMs <= 0) return refill();
      const timer = setTimeout(refill, delayMs);
      timer.unref();
    },
    async close() {
      closed = true;
      if (sweeper) clearInterval(sweeper);
      const all = [...sessions.keys()];
      await Promise.all(all.map((id) => end(id)));
      await Promise.all(ready.splice(0).map((sandbox) => sandbox.close()));
    },
  };
}
