import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { clockStart, configSchema, type Config } from '../config.js';
import type { Fixtures } from '../fixtures/fixtures.schema.js';
import { restoreSnapshot, restoreSnapshotSteps, rowsIn, setStartingSnapshot, type Snapshot } from '../snapshots/snapshot.js';
import { runInTurns, runNow, type Steps } from '../lib/turns.js';
import { markEqualTo } from '../snapshots/snapshots.tracking.js';
import { BULK_RESTORE_ROWS } from '../db/snapshot-tables.js';
import { keepSessionImage, roomForImage } from '../snapshots/snapshot-budget.js';
import { pinSessionWebhookUrl } from '../domains/webhooks/webhooks.endpoints.js';
import { errors } from '../core/errors.js';
import { enterPathPrefix } from '../http/public-url.js';
import { bindSandbox } from '../http/request-sandbox.js';
import { createIdSource } from '../lib/ids.js';
import { databaseCounter } from '../db/id-counter.js';
import { openImage, prepared, type Db } from '../db/connection.js';
import { compactImage } from '../db/compact-image.js';
import { forgetClock } from '../db/clock-store.js';

// Sessions (docs/sessions.md): sandboxes of their own, each with its own in-memory database, clock, scheduler, webhook
// dispatcher, journal and snapshots, served by the server's one app under /_sessions/{id}. A session is data, not a
// server: its context and the background pieces beside it; the app resolves each request's sandbox before routing
// (docs/architecture.md#the-request-path, step 0).

export const SESSION_PATH = '/_sessions/';

/**
 * A sandbox as the registry uses it: what `openSandbox` (src/sandbox.ts) answers. The server hands that function in,
 * so sessions name no app/wiring module (docs/architecture.md#layers).
 */
export interface Sandbox {
  ctx: AppContext;
  /** Stop its background pieces (its streams end), wait for `drained` if given, then close its database. */
  close(drained?: () => Promise<void>): Promise<void>;
}

export type OpenSandbox = (options: { parsedConfig: Config; fixtures: Fixtures; image?: Buffer; dueJobsLater?: boolean }) => Sandbox;

/** Fixtures other than the server's whose database image is kept, the most recently used (docs/sessions.md#how-fast). */
const IMAGES_KEPT = 4;

/** Retry-After of a 429 before any session has ended (docs/sessions.md#limits). */
const FIRST_RETRY_MS = 5_000;
/** How many ended sessions' lifetimes the Retry-After estimate reads. */
const LIFETIMES_KEPT = 32;

/** The session a request under /_sessions/ asked for (`session` absent: no such session), kept on the request. */
const ARRIVAL = Symbol('service-sandbox.session');
type Arrival = { id: string; session?: Session };
type ArrivedRequest = IncomingMessage & { [ARRIVAL]?: Arrival };

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
  /** Its sandbox: opened on first use, which comes in the turn the session was created (docs/sessions.md#how-fast). */
  readonly sandbox: Sandbox;
  /** Whether its sandbox is open yet (its create's answer is built before: docs/sessions.md#how-fast). */
  readonly opened: boolean;
  /** The fixtures it runs with (the server's, or those it was given). */
  fixtures: Fixtures;
  /** Where its creator said it sends (null: nowhere), as it starts and after every reset (docs/sessions.md#webhooks). */
  pinnedWebhookUrl: string | null;
  createdAtMs: number;
  lastUsedAtMs: number;
  /** Requests being answered right now: a session is not ended by idleness while it works. */
  inFlight: number;
  startedFrom: { fixtures: 'server' | 'given'; snapshot: string | null; clock: string; seed: string | null };
  label: string | null;
  /** The scenario it started from, once its `given` is built (docs/sessions.md#scenarios). */
  scenario: { name: string; source: 'shipped' | 'folder' | 'given'; steps: number; given: Record<string, string> } | null;
}

export interface SessionRegistry {
  readonly limit: number;
  readonly idleTimeoutMs: number;
  /**
   * Create a session. `answer` is called with it once it is registered: before its database opens when it opens an
   * image (then the database opens right after, in the same turn: docs/sessions.md#how-fast), after otherwise.
   */
  create(options: SessionOptions, answer?: (session: Session) => void): Promise<Session>;
  get(id: string): Session | undefined;
  /** Oldest first; only those created with `label` when it is given. */
  list(label?: string): Session[];
  /** End a session: its requests are answered 404 from now on, and its sandbox is closed. */
  end(id: string): Promise<boolean>;
  /** End every session created with `label`; the ids it ended, oldest first. */
  endLabelled(label: string): Promise<string[]>;
  /**
   * Before routing (the app's `rewriteUrl`): bind a /_sessions/{id}/... request to that session's sandbox and answer
   * the url the app routes, without the prefix (docs/sessions.md#addresses-and-signing).
   */
  enter(req: IncomingMessage): string;
  /** The app's first onRequest hook: 404 for a session that does not exist; a session's requests keep it alive. */
  onRequest(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void;
  close(): Promise<void>;
}

export interface RegistryOptions {
  /** The real wall clock: idleness is real time, never the emulated clock. */
  now?: () => number;
}

/**
 * `root` is the server's own sandbox: sessions take its configuration (an in-memory database, no webhook URL unless
 * given: docs/sessions.md#what-a-session-starts-from), its fixtures and its snapshots.
 */
export function createSessionRegistry(root: AppContext, open: OpenSandbox, options: RegistryOptions = {}): SessionRegistry {
  const now = options.now ?? Date.now;
  const sessions = new Map<string, Session>();
  // docs/sessions.md#how-fast: the database a session starts from, by its fixtures ('' the server's), taken from the
  // first sandbox opened with them; later ones open a copy instead of migrating and seeding.
  const images = new Map<string, SandboxImage>();
  let closed = false;
  let sweeper: NodeJS.Timeout | undefined;
  let created = 0;
  // sessions being created (a big snapshot's restore takes turns of the event loop): counted against the limit, and
  // close() waits for them to end, their databases closed
  const opening = new Set<Promise<void>>();
  // docs/control-plane.md#big-states: the first session from a snapshot without an image, while it restores it; other
  // sessions from that snapshot wait for it and open the image it keeps
  const firstFrom = new WeakMap<Snapshot, Promise<void>>();
  // docs/sessions.md#ids: unseeded sessions draw from the server's --seed, or without one from a seed of this start's
  // own, so no two starts hand out the same ids either.
  const startSeed = root.config.seed ?? `start-${randomBytes(8).toString('hex')}`;
  // Real lifetimes (create to end) of the latest sessions ended by a client, for the 429's Retry-After.
  const lifetimes: number[] = [];
  const limit = root.config.maxSessions;
  const idleTimeoutMs = root.config.sessionIdleTimeout * 1000;
  // parsed once: a session's clock, the one setting it may change, was checked by the request's schema already
  const sessionConfig: Config = configSchema.parse({ ...root.config, db: ':memory:', webhookUrl: undefined });

  /** `fromSnapshot`: the image of its snapshot's database, when one is kept (read once, in the turn the session starts). */
  /** `key`: its fixtures' key in `images`. */
  function openFor(sessionOptions: SessionOptions, fromSnapshot: Buffer | undefined, key: string): Sandbox {
    const parsedConfig = sessionOptions.clock ? { ...sessionConfig, clock: sessionOptions.clock } : sessionConfig;
    // its jobs run once the clock is at the snapshot's instant, as after the restore below
    if (fromSnapshot) return open({ parsedConfig, fixtures: root.fixtures, image: fromSnapshot, dueJobsLater: true });
    const image = images.get(key);
    const sandbox = open({
      parsedConfig,
      fixtures: sessionOptions.fixtures ?? root.fixtures,
      // an image without a pending job: the pass over due jobs at opening would find none
      ...(image ? { image: image.bytes, dueJobsLater: !image.pendingJobs } : {}),
    });
    // taken before the sandbox serves anything: its database is still the migrated and seeded one. A server started
    // with --snapshot starts each session's database and clock from that file instead (no image).
    if (!image && !sessionConfig.snapshot) {
      images.set(key, { bytes: sandboxImage(sandbox.ctx.db), pendingJobs: hasPendingJobs(sandbox.ctx.db) });
      const given = [...images.keys()].filter((other) => other !== '');
      if (given.length > IMAGES_KEPT) images.delete(given[0]!);
    } else if (image && key !== '') {
      images.delete(key); // to the end: the most recently used
      images.set(key, image);
    }
    return sandbox;
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

  /** The start of the first session from the same snapshot, restoring it now (no image of it is kept yet). */
  function restoring(sessionOptions: SessionOptions): Promise<void> | undefined {
    const { snapshot } = sessionOptions;
    return snapshot && !snapshot.sessionImage ? firstFrom.get(snapshot) : undefined;
  }

  /** Whether the session would open a database image as it is: nothing of its input can fail it. */
  function opensAnImage(sessionOptions: SessionOptions, snapshotImage: Buffer | undefined, key: string): boolean {
    return sessionOptions.snapshot ? snapshotImage !== undefined : images.has(key);
  }

  async function create(sessionOptions: SessionOptions, answer?: (session: Session) => void): Promise<Session> {
    for (let first = restoring(sessionOptions); first; first = restoring(sessionOptions)) await first;
    if (closed) throw errors.unavailable('The server is shutting down');
    if (sessions.size + opening.size >= limit) {
      throw errors.tooManyRequests(
        limit === 0
          ? 'Sessions are turned off on this server (--max-sessions 0)'
          : `${limit} ${limit === 1 ? 'session is' : 'sessions are'} live, the most this server keeps; end one with DELETE /_emulator/sessions/{id} ` +
            `(or a run's with DELETE /_emulator/sessions?label=...), retry after the Retry-After seconds, or start the server with a higher --max-sessions (MAX_SESSIONS)`,
        retryAfterSeconds(),
      );
    }
    const snapshotImage = sessionOptions.snapshot?.sessionImage;
    // the images of the server's fixtures are kept under '', of given ones under their JSON
    const key = sessionOptions.fixtures ? JSON.stringify(sessionOptions.fixtures) : '';
    if (answer && opensAnImage(sessionOptions, snapshotImage, key)) {
      // docs/sessions.md#how-fast: a session that opens an image is answered first and opened right after, in the same
      // turn, so nothing reaches it in between and its creator reads the answer while its database opens
      created += 1;
      const seed = sessionOptions.seed ?? `${startSeed}/session-${created}`;
      const session = register(sessionOptions, startingClock(sessionOptions), () => {
        const sandbox = openFor(sessionOptions, snapshotImage, key);
        try {
          runNow(startSteps(sandbox, sessionOptions, seed, snapshotImage !== undefined));
        } catch (error) {
          void sandbox.close();
          throw error;
        }
        return sandbox;
      });
      try {
        answer(session);
      } finally {
        openAnswered(session);
      }
      return session;
    }
    const sandbox = openFor(sessionOptions, snapshotImage, key);
    let started!: () => void;
    const starting = new Promise<void>((resolve) => {
      started = resolve;
    });
    opening.add(starting);
    if (sessionOptions.snapshot && !snapshotImage) firstFrom.set(sessionOptions.snapshot, starting);
    try {
      created += 1;
      const seed = sessionOptions.seed ?? `${startSeed}/session-${created}`;
      // docs/control-plane.md#big-states: a big snapshot's restore takes turns (the new sandbox serves nothing yet, so
      // nothing waits for it but its creator)
      await runInTurns(startSteps(sandbox, sessionOptions, seed, snapshotImage !== undefined), () =>
        closed ? errors.unavailable('The server is shutting down') : null,
      );
      if (closed) throw errors.unavailable('The server is shutting down'); // while a restore took turns
    } catch (error) {
      await sandbox.close();
      throw error;
    } finally {
      opening.delete(starting);
      if (sessionOptions.snapshot && firstFrom.get(sessionOptions.snapshot) === starting) firstFrom.delete(sessionOptions.snapshot);
      started();
    }
    const { clock } = sandbox.ctx;
    const session = register(sessionOptions, clock.state().mode === 'frozen' ? clock.nowIso() : 'realtime', sandbox);
    answer?.(session);
    return session;
  }

  /** Open a session answered before its database: a failure removes it (its next request is a 404) and is thrown. */
  function openAnswered(session: Session): void {
    try {
      void session.sandbox; // the first use opens it
    } catch (error) {
      sessions.delete(session.id);
      throw error;
    }
  }

  /**
   * What a session's start does once its database is open: its ids, its snapshot (a snapshot's image holds every table
   * but `meta`; without an image the snapshot's rows are restored, a chunk at a time for a big one), where it sends.
   */
  function* startSteps(sandbox: Sandbox, sessionOptions: SessionOptions, seed: string, openedSnapshotImage: boolean): Steps {
    const { ctx } = sandbox;
    // docs/sessions.md#ids: a sequence of the session's own, so no two sessions hand out the same id; with a seed, the
    // ids a fresh server started with that --seed would draw.
    ctx.ids = createIdSource(seed, databaseCounter(ctx.db));
    const { snapshot } = sessionOptions;
    if (snapshot) {
      setStartingSnapshot(ctx, snapshot); // its reset goes back to the snapshot
      if (openedSnapshotImage) {
        // every table but meta is the snapshot's already; meta (its clock record, which the image leaves out) is put
        // back as the full restore leaves it, then the clock as a restore sets it
        restoreSnapshot(ctx, { ...snapshot, tables: snapshot.tables.filter((table) => table.name === 'meta') });
      } else {
        yield* restoreSnapshotSteps(ctx, snapshot);
        // docs/sessions.md#how-fast: later sessions from it open this database, while the process budget has room
        // (the database's size bounds the image's: without room for it, no copy is made only to be thrown away)
        const databaseBytes = Number(ctx.db.pragma('page_count', { simple: true })) * Number(ctx.db.pragma('page_size', { simple: true }));
        // (a big one as it is: sessions opening an image restore `meta` from the snapshot, clock record included, so
        // it needs no copy without that record)
        if (!sessionConfig.snapshot && roomForImage(databaseBytes)) {
          keepSessionImage(snapshot, databaseBytes > COMPACT_IMAGES_UP_TO ? ctx.db.serialize() : sandboxImage(ctx.db));
        }
      }
      // docs/control-plane.md#big-states: a big snapshot's session notes the tables it writes from the start, so its
      // reset compares those only, not every row of the snapshot
      if (rowsIn(snapshot) > BULK_RESTORE_ROWS) markEqualTo(ctx, snapshot);
    }
    // A session sends only where its creator said, whatever its fixtures or snapshot name, and after every
    // reset too (docs/sessions.md#webhooks): deliveries of two sessions never reach one receiver by accident.
    pinSessionWebhookUrl(ctx, sessionOptions.webhookUrl ?? null);
    ctx.db.pragma('shrink_memory');
  }

  /** The session, listed and reachable from now on: its sandbox, or what opens it on first use; `clock` as it starts. */
  function register(sessionOptions: SessionOptions, clock: string, opened: Sandbox | (() => Sandbox)): Session {
    const at = now();
    let sandbox = typeof opened === 'function' ? undefined : opened;
    const session: Session = {
      id: `ses_${randomBytes(8).toString('hex')}`,
      get sandbox() {
        sandbox ??= (opened as () => Sandbox)();
        return sandbox;
      },
      get opened() {
        return sandbox !== undefined;
      },
      fixtures: sessionOptions.fixtures ?? root.fixtures,
      pinnedWebhookUrl: sessionOptions.webhookUrl ?? null,
      createdAtMs: at,
      lastUsedAtMs: at,
      inFlight: 0,
      startedFrom: {
        fixtures: sessionOptions.fixtures ? 'given' : 'server',
        snapshot: sessionOptions.snapshot?.name ?? null,
        clock,
        seed: sessionOptions.seed ?? null,
      },
      label: sessionOptions.label ?? null,
      scenario: null,
    };
    sessions.set(session.id, session);
    startSweeper();
    return session;
  }

  /**
   * The clock a session opening an image starts at, as its answer shows it before its database is open: a snapshot's
   * instant (or `realtime`, a snapshot of a flowing clock), else its own `clock` or the server's `--clock` (a server
   * started with `--snapshot` keeps no image: its sessions start from that file's clock, read once opened).
   */
  function startingClock(sessionOptions: SessionOptions): string {
    const { snapshot } = sessionOptions;
    if (snapshot) return snapshot.clockMode === 'frozen' ? new Date(snapshot.clockMs).toISOString() : 'realtime';
    const start = clockStart(sessionOptions.clock ? { ...sessionConfig, clock: sessionOptions.clock } : sessionConfig);
    return start.mode === 'frozen' ? new Date(start.atMs).toISOString() : 'realtime';
  }

  async function end(id: string, byClient = true): Promise<boolean> {
    const session = sessions.get(id);
    if (!session) return false;
    sessions.delete(id);
    if (byClient) {
      lifetimes.push(now() - session.createdAtMs);
      if (lifetimes.length > LIFETIMES_KEPT) lifetimes.shift();
    }
    // Its streams (the dashboard's, listen's) end first, as they would otherwise count as requests inside; then the
    // requests already inside finish (at most a few seconds) while the database stays open for them.
    await session.sandbox.close(async () => {
      for (let waited = 0; session.inFlight > 0 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    });
    return true;
  }

  function enter(req: IncomingMessage): string {
    const url = req.url ?? '/';
    const afterPath = url.slice(SESSION_PATH.length);
    const cut = afterPath.search(/[/?]/);
    const id = cut === -1 ? afterPath : afterPath.slice(0, cut);
    const session = sessions.get(id);
    (req as ArrivedRequest)[ARRIVAL] = session ? { id, session } : { id };
    if (session) {
      bindSandbox(req, session.sandbox.ctx);
      session.lastUsedAtMs = now();
    }
    return enterPathPrefix(req, SESSION_PATH + id);
  }

  function onRequest(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const arrival = (request.raw as ArrivedRequest)[ARRIVAL];
    if (!arrival) return done();
    const { session, id } = arrival;
    if (!session || !sessions.has(id)) {
      const shown = id.length > 80 ? `${id.slice(0, 80)}...` : id;
      return done(
        errors.notFound(
          `No session "${shown}" on this server: it was ended, it expired after ${root.config.sessionIdleTimeout} s without requests, or it never existed (POST /_emulator/sessions creates one)`,
        ),
      );
    }
    session.inFlight += 1;
    reply.raw.once('close', () => {
      session.inFlight -= 1;
      session.lastUsedAtMs = now();
    });
    done();
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
    enter,
    onRequest,
    async close() {
      closed = true;
      if (sweeper) clearInterval(sweeper);
      await Promise.all(opening); // each stops at its next turn and closes its database
      await Promise.all([...sessions.keys()].map((id) => end(id, false)));
    },
  };
}

interface SandboxImage {
  bytes: Buffer;
  pendingJobs: boolean;
}

function hasPendingJobs(db: Db): boolean {
  return prepared<{ any: number }>(db, "SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'PENDING') AS any").get()!.any === 1;
}

/**
 * The bytes of a new sandbox's database, to open others like it from (OpenSandbox's `image`): its migrated and seeded
 * tables without the clock record, so each sandbox opened from it starts its own clock as a new database does.
 * Seeding never reads the clock (src/emulator/reset.service.ts keeps one image per sandbox on the same ground).
 */
/**
 * docs/sessions.md#how-fast: a snapshot's database up to this size is written with 1 KiB pages for its image, saving
 * the empty tables' pages; a bigger one would be copied row by row for a few percent, and is kept as it is.
 */
const COMPACT_IMAGES_UP_TO = 8 * 1024 * 1024;

export function sandboxImage(db: Db): Buffer {
  const copy = openImage(db.serialize());
  try {
    forgetClock(copy);
    return compactImage(copy);
  } finally {
    copy.close();
  }
}
