import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import type { Config } from '../config.js';
import type { Fixtures } from '../fixtures/fixtures.schema.js';
import { restoreSnapshot, setStartingSnapshot, type Snapshot } from '../emulator/snapshots.service.js';
import { pinSessionWebhookUrl } from '../domains/webhooks/webhooks.service.js';
import { errors, ServiceError } from '../core/errors.js';
import { enterPathPrefix } from '../http/public-url.js';
import { endListener } from '../emulator/listen.service.js';
import { createIdSource } from '../lib/ids.js';
import { databaseCounter } from '../db/id-counter.js';
import { openImage, type Db } from '../db/connection.js';
import { forgetClock } from '../emulator/clock.store.js';

// Sessions (docs/sessions.md): whole sandboxes, each with its own in-memory database, clock, scheduler, webhook
// dispatcher, journal and snapshots, served by the root sandbox's listener under /_sessions/{id}. They share
// nothing but the process: a session's app is built by the same buildApp as the root's, around its own context.

export const SESSION_PATH = '/_sessions/';

/**
 * A whole sandbox as the registry uses it: what `openSandbox` (src/sandbox.ts) answers. The server hands that
 * function in, so sessions name no app/wiring module (docs/architecture.md#layers).
 */
export interface Sandbox {
  ctx: AppContext;
  app: FastifyInstance;
  close(): Promise<void>;
}

export type OpenSandbox = (options: { config: Partial<Config>; fixtures: Fixtures; image?: Buffer }, build?: { yieldBetweenSteps?: boolean }) => Promise<Sandbox>;

/** Sandboxes built ahead for one start, and the image of their database (docs/sessions.md#how-fast). */
interface Pool {
  start: SandboxStart;
  sandboxes: Sandbox[];
  image?: Buffer;
}

/** How a pooled sandbox starts: the server's clock and fixtures unless given. */
interface SandboxStart {
  clock?: string;
  fixtures?: Fixtures;
}

/** Starts other than the server's that keep a pool, the most recently used (docs/sessions.md#how-fast). */
const POOL_STARTS = 4;

/** Retry-After of a 429 before any session has ended (docs/sessions.md#limits). */
const FIRST_RETRY_MS = 5_000;
/** How many ended sessions' lifetimes the Retry-After estimate reads. */
const LIFETIMES_KEPT = 32;

export interface SessionOptions {
  /** Fixtures for this session instead of the server's (validated already). */
  fixtures?: Fixtures;
  /** Start from this snapshot (one saved on the root sandbox); reset goes back to it. */
  snapshot?: Snapshot;
  /** `realtime` or an ISO instant (frozen there), as `--clock`. */
  clock?: string;
  webhookUrl?: string | null;
  /** Ids follow this seed (docs/sessions.md#ids); absent: a seed of the session's own. */
  seed?: string;
  /** A run's name for its sessions: listed and ended together (docs/sessions.md#labels). */
  label?: string;
}

export interface Session {
  id: string;
  sandbox: Sandbox;
  createdAtMs: number;
  lastUsedAtMs: number;
  /** Requests being answered right now: a session is not ended by idleness while it works. */
  inFlight: number;
  startedFrom: { fixtures: 'server' | 'given'; snapshot: string | null; clock: string; seed: string | null };
  label: string | null;
}

export interface SessionRegistry {
  readonly limit: number;
  readonly idleTimeoutMs: number;
  create(options: SessionOptions): Promise<Session>;
  get(id: string): Session | undefined;
  /** Oldest first; only those created with `label` when it is given. */
  list(label?: string): Session[];
  /** End a session: its requests are answered 404 from now on, and its sandbox is closed. */
  end(id: string): Promise<boolean>;
  /** End every session created with `label`; the ids it ended, oldest first. */
  endLabelled(label: string): Promise<string[]>;
  /** Serve `req` when its path is under /_sessions/; false leaves it to the root app. */
  dispatch(req: IncomingMessage, res: ServerResponse): boolean;
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
  // Sandboxes built ahead, by how they start (docs/sessions.md#how-fast): '' is the server's own start; a
  // session's own clock or fixtures get a pool of their own from their first use, the latest POOL_STARTS of them.
  // Each start keeps the image of its first sandbox's database, and opens the next ones from it.
  const ready = new Map<string, Pool>([['', { start: {}, sandboxes: [] }]]);
  // Builds under way for the pool, by start: close() waits for them (a build ahead yields between its steps).
  const filling = new Map<string, Promise<void>>();
  let creating = 0;
  let closed = false;
  let sweeper: NodeJS.Timeout | undefined;
  let created = 0;
  // Real lifetimes (create to end) of the latest sessions ended by a client, for the 429's Retry-After.
  const lifetimes: number[] = [];
  const limit = root.config.maxSessions;
  const idleTimeoutMs = root.config.sessionIdleTimeout * 1000;
  const sessionConfig: Partial<Config> = { ...root.config, db: ':memory:', webhookUrl: undefined };

  /** `ahead`: built for the pool, between other requests (yielding between its steps), not for a waiting client. */
  async function openFor(pool: Pool, ahead = false): Promise<Sandbox> {
    const { start } = pool;
    const sandbox = await open(
      {
        config: { ...sessionConfig, ...(start.clock ? { clock: start.clock } : {}) },
        fixtures: start.fixtures ?? root.fixtures,
        ...(pool.image ? { image: pool.image } : {}),
      },
      { yieldBetweenSteps: ahead },
    );
    // taken before the sandbox serves anything: its database is still the migrated and seeded one. A server started
    // with --snapshot starts each session's database and clock from that file instead (no image).
    if (!sessionConfig.snapshot) pool.image ??= sandboxImage(sandbox.ctx.db);
    return sandbox;
  }

  // docs/sessions.md#how-fast: building a sandbox (migrations, fixtures, every route's schemas) takes tens of
  // milliseconds; a few are built ahead, between requests, so creating a session takes one from the pool.
  function refill(key = ''): void {
    const pool = ready.get(key);
    if (!pool || filling.has(key) || closed || pool.sandboxes.length >= root.config.sessionPool) return;
    let built!: () => void;
    const done = new Promise<void>((resolve) => (built = resolve));
    filling.set(key, done);
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- every rejection is caught inside
    setImmediate(async () => {
      try {
        if (closed) return;
        const sandbox = await openFor(pool, true);
        if (closed || ready.get(key) !== pool) await sandbox.close();
        else pool.sandboxes.push(sandbox);
      } catch {
        // a failure here shows on the next create, which builds its own sandbox
      } finally {
        filling.delete(key);
        built();
        if (!closed && pool.sandboxes.length < root.config.sessionPool) refill(key);
      }
    });
  }

  /** The pool of a start other than the server's, made on its first use; the least recently used one goes. */
  function poolOf(key: string, start: SandboxStart): void {
    const pool = ready.get(key);
    if (pool) {
      ready.delete(key); // to the end: the most recently used
      ready.set(key, pool);
      return;
    }
    ready.set(key, { start, sandboxes: [] });
    const others = [...ready.keys()].filter((other) => other !== '');
    if (others.length > POOL_STARTS) {
      const dropped = ready.get(others[0]!)!;
      ready.delete(others[0]!);
      for (const sandbox of dropped.sandboxes.splice(0)) void sandbox.close();
    }
  }

  function startSweeper(): void {
    if (sweeper || closed) return;
    sweeper = setInterval(sweep, Math.min(Math.max(idleTimeoutMs / 4, 50), 30_000));
    sweeper.unref();
  }

  function sweep(): void {
    const at = now();
    for (const session of sessions.values()) {
      if (session.inFlight === 0 && at - session.lastUsedAtMs >= idleTimeoutMs) void end(session.id, false);
    }
  }

  // docs/sessions.md#limits: when a slot can be expected. A test run ends its sessions as its tests finish, so the
  // oldest live session is expected to end once it has lived as long as the sessions ended before it (their
  // median); before any has ended, a few seconds. Never later than the first idle expiry.
  function retryAfterSeconds(): number {
    const at = now();
    let expected = Infinity;
    for (const session of sessions.values()) expected = Math.min(expected, session.lastUsedAtMs + idleTimeoutMs);
    if (lifetimes.length === 0) expected = Math.min(expected, at + FIRST_RETRY_MS);
    else {
      const typical = [...lifetimes].sort((a, b) => a - b)[Math.floor(lifetimes.length / 2)]!;
      for (const session of sessions.values()) expected = Math.min(expected, session.createdAtMs + typical);
    }
    return Number.isFinite(expected) ? Math.max(1, Math.ceil((expected - at) / 1000)) : 1;
  }

  async function sandboxFor(options: SessionOptions): Promise<Sandbox> {
    const start: SandboxStart = {
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.fixtures ? { fixtures: options.fixtures } : {}),
    };
    const key = options.fixtures || options.clock ? JSON.stringify([options.clock ?? null, options.fixtures ?? null]) : '';
    if (key !== '') poolOf(key, start);
    const pooled = ready.get(key)!.sandboxes.pop();
    refill(key);
    return pooled ?? openFor(ready.get(key)!);
  }

  async function create(options: SessionOptions): Promise<Session> {
    if (closed) throw errors.unavailable('The server is shutting down');
    if (sessions.size + creating >= limit) {
      throw new SessionLimitError(
        limit === 0
          ? 'Sessions are turned off on this server (--max-sessions 0)'
          : `${limit} ${limit === 1 ? 'session is' : 'sessions are'} live, the most this server keeps; end one with DELETE /_emulator/sessions/{id} ` +
            `(or a run's with DELETE /_emulator/sessions?label=...), retry after the Retry-After seconds, or start the server with a higher --max-sessions (MAX_SESSIONS)`,
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
      // docs/sessions.md#ids: a sequence of the session's own, so no two sessions hand out the same id; with a
      // seed, the ids a fresh server started with that --seed would draw.
      created += 1;
      sandbox.ctx.ids = createIdSource(options.seed ?? `${root.config.seed}/session-${created}`, databaseCounter(sandbox.ctx.db));
      if (options.snapshot) {
        setStartingSnapshot(sandbox.ctx, options.snapshot); // its reset goes back to the snapshot
        restoreSnapshot(sandbox.ctx, options.snapshot);
      }
      // A session sends only where its creator said, whatever its fixtures or snapshot name, and after every
      // reset too (docs/sessions.md#webhooks): deliveries of two sessions never reach one receiver by accident.
      pinSessionWebhookUrl(sandbox.ctx, options.webhookUrl ?? null);
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
        seed: options.seed ?? null,
      },
      label: options.label ?? null,
    };
    if (closed) {
      await sandbox.close();
      throw errors.unavailable('The server is shutting down');
    }
    sessions.set(session.id, session);
    startSweeper();
    return session;
  }

  async function end(id: string, byClient = true): Promise<boolean> {
    const session = sessions.get(id);
    if (!session) return false;
    sessions.delete(id);
    if (byClient) {
      lifetimes.push(now() - session.createdAtMs);
      if (lifetimes.length > LIFETIMES_KEPT) lifetimes.shift();
    }
    endListener(session.sandbox.ctx); // its listen stream would otherwise count as a request inside (docs/webhooks.md#listen)
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

  function list(label?: string): Session[] {
    const all = [...sessions.values()].sort((a, b) => a.createdAtMs - b.createdAtMs || a.id.localeCompare(b.id));
    return label === undefined ? all : all.filter((session) => session.label === label);
  }

  return {
    limit,
    idleTimeoutMs,
    create,
    get: (id) => sessions.get(id),
    list,
    end: (id) => end(id),
    async endLabelled(label) {
      const ids = list(label).map((session) => session.id);
      await Promise.all(ids.map((id) => end(id)));
      return ids;
    },
    dispatch,
    async close() {
      closed = true;
      if (sweeper) clearInterval(sweeper);
      const all = [...sessions.keys()];
      await Promise.all(all.map((id) => end(id, false)));
      await Promise.all(filling.values()); // each closes the sandbox it built, seeing `closed`
      const pooled = [...ready.values()].flatMap((pool) => pool.sandboxes.splice(0));
      await Promise.all(pooled.map((sandbox) => sandbox.close()));
    },
  };
}

/**
 * The bytes of a new sandbox's database, to open others like it from (OpenSandbox's `image`): its migrated and seeded
 * tables without the clock record, so each sandbox opened from it starts its own clock as a new database does.
 * Seeding never reads the clock (src/emulator/reset.service.ts keeps one image per sandbox on the same ground).
 */
export function sandboxImage(db: Db): Buffer {
  const copy = openImage(db.serialize());
  try {
    forgetClock(copy);
    return copy.serialize();
  } finally {
    copy.close();
  }
}
