import { openDatabase, openImage, prepared, type Db } from './db/connection.js';
import { databaseCounter } from './db/id-counter.js';
import { createClock, type Clock, type ClockState } from './lib/clock.js';
import { planClockStart, readStoredClock, storeClock, type ClockStartPlan, type StoredClock } from './db/clock-store.js';
import { advanceClock } from './scheduler/scheduler.js';
import { createIdSource } from './lib/ids.js';
import { clockStart, ConfigError, configSchema, DEFAULT_SEED, type Config } from './config.js';
import { FixturesError, loadFixtures } from './fixtures/fixtures.loader.js';
import type { Fixtures } from './fixtures/fixtures.schema.js';
import { seedFixtures } from './fixtures/fixtures.seed.js';
import { readSnapshotFileAtStart, setStartingSnapshot, SNAPSHOT_FILE_LIMIT, type Snapshot } from './snapshots/snapshot.js';
import { ServiceError } from './core/errors.js';
import { restoreNewDatabase } from './db/snapshot-tables.js';
import { readUserFile, UserFileError } from './lib/user-file.js';
import { afterJobsRan, jobFailureHandlers, jobHandlers, stateSlots, wireModules } from './modules.js';
import { SandboxRuntime } from './runtime/sandbox-runtime.js';
import type { AppContext } from './context.js';

export interface ContextOptions {
  config?: Partial<Config>;
  /**
   * A configuration parsed already, used as it is instead of `config` (sessions: the registry parses the server's
   * once, not per session: docs/sessions.md#how-fast).
   */
  parsedConfig?: Config;
  db?: Db;
  /**
   * Open the database from this image (sessions.registry's `sandboxImage` of a sandbox of the same fixtures and webhook URL)
   * instead of migrating and seeding a new one: how sessions are built (docs/sessions.md#how-fast).
   */
  image?: Buffer;
  clock?: Clock;
  fixtures?: Fixtures;
  /** Where start-up warnings go (default: one line on stderr unless the log level is above warn). */
  warn?: (line: string) => void;
}

function defaultWarn(config: Config): (line: string) => void {
  return (line) => {
    if (!['silent', 'fatal', 'error'].includes(config.logLevel)) process.stderr.write(`service-sandbox: ${line}\n`);
  };
}

/** Open (or take) the database, seed it from the fixtures when empty, and assemble the context and its runtime. */
export function createContext(options: ContextOptions = {}): AppContext {
  const config = options.parsedConfig ?? configSchema.parse(options.config ?? {});
  const db = options.db ?? (options.image ? openImage(options.image) : openDatabase(config.db));
  const startingPoint = config.snapshot ? startFromSnapshot(db, config.snapshot, options.warn ?? defaultWarn(config)) : undefined;
  // an image holds no clock record (sessions.registry's sandboxImage leaves it out): nothing to read
  const started = options.clock ? undefined : persistentClock(db, config, Date.now, options.image ? undefined : readStoredClock(db));
  const clock = options.clock ?? started!.clock;
  const fixtures = options.fixtures ?? loadFixtures(config.fixtures);
  const ctx: AppContext = {
    db,
    clock,
    ids: createIdSource(config.seed ?? DEFAULT_SEED, databaseCounter(db)),
    config,
    fixtures,
    jobHandlers,
    jobFailureHandlers,
    afterJobsRan,
    // the one place a sandbox's in-memory state is made (docs/architecture.md#runtime)
    runtime: new SandboxRuntime(stateSlots, config),
  };
  wireModules(ctx);
  const seeded = prepared<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM programmes').get()!.n > 0;
  if (!seeded) {
    try {
      seedFixtures(ctx);
    } catch (error) {
      // read and valid, yet not seedable (a date of birth after --clock): the CLI names the flag to blame
      if (error instanceof FixturesError) error.seeding = true;
      throw error;
    }
  }
  if (startingPoint) setStartingSnapshot(ctx, startingPoint);
  if (startingPoint && options.clock) {
    ctx.clock.freezeAt(startingPoint.clockMs); // an injected clock (test kit) starts where the snapshot was
    if (startingPoint.clockMode === 'realtime') ctx.clock.resume();
  }
  if (started) {
    if (started.plan.warning) (options.warn ?? defaultWarn(config))(started.plan.warning);
    applyClockStart(ctx, started.plan, Date.now);
  }
  return ctx;
}

/**
 * `--snapshot FILE` (docs/configuration.md#snapshot): a new database is filled from the file instead of the
 * fixtures, and its clock recorded as a database file records it, so the start-up clock rules apply as on a
 * file that already held this state (a later `--clock` moves forward, an earlier one is ignored). A database
 * file that already holds a sandbox keeps it (one warning); reset still goes back to the snapshot.
 */
function startFromSnapshot(db: Db, file: string, warn: (line: string) => void): Snapshot {
  let snapshot: Snapshot;
  try {
    snapshot = readSnapshotFileAtStart(readUserFile(file, SNAPSHOT_FILE_LIMIT), 'startup', Date.now());
  } catch (error) {
    if (error instanceof UserFileError) throw new ConfigError(`invalid --snapshot / SNAPSHOT "${file}": cannot read it: ${error.message}`);
    const reason = error instanceof ServiceError ? error.message.replace(/^Not a snapshot this server can restore: /, '') : (error as Error).message;
    throw new ConfigError(`invalid --snapshot / SNAPSHOT "${file}": not a snapshot this server can start from: ${reason}`);
  }
  const fresh = prepared<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM programmes').get()!.n === 0;
  if (!fresh) {
    warn(`warning: --snapshot ${file} not loaded: the database already holds a sandbox (it is kept); /_emulator/reset goes to the snapshot`);
    return snapshot;
  }
  restoreNewDatabase(db, snapshot.tables);
  const state: ClockState =
    snapshot.clockMode === 'frozen' ? { mode: 'frozen', frozenAtMs: snapshot.clockMs } : { mode: 'realtime', offsetMs: snapshot.clockMs - Date.now() };
  prepared(db, "DELETE FROM meta WHERE key = 'clock_high_water_ms'").run(); // the snapshot's instant is the new start
  storeClock(db, state, snapshot.clockMs);
  return snapshot;
}

/**
 * The clock of `--clock`, started where the database file's record says (src/db/clock-store.ts): it never
 * runs backwards behind what is recorded, and every move is recorded. `restoreInitial` (reset) goes back to
 * the `--clock` start, as a new database would (docs/decisions.md#reset-and-the-clock).
 */
function persistentClock(db: Db, config: Config, wallClock: () => number, stored: StoredClock | undefined): { clock: Clock; plan: ClockStartPlan } {
  const plan = planClockStart(stored, config.clock, wallClock());
  let clock: Clock | undefined;
  const persist = (state: ClockState) => storeClock(db, state, clock ? clock.nowMs() : plan.fromMs);
  clock = createClock(clockStart(config), wallClock, persist);
  clock.freezeAt(plan.fromMs);
  return { clock, plan };
}

/**
 * Move the clock forward to where the start plan says, running the jobs due on the way at their own due
 * times (scheduler.advanceClock), then let it flow again if it should.
 */
function applyClockStart(ctx: AppContext, plan: ClockStartPlan, wallClock: () => number): void {
  if (plan.toMs > ctx.clock.nowMs()) advanceClock(ctx, plan.toMs - ctx.clock.nowMs());
  if (plan.then.mode === 'realtime') {
    ctx.clock.resume();
    const behind = wallClock() + plan.then.offsetMs - ctx.clock.nowMs();
    if (behind > 0) ctx.clock.advance(behind); // the few ms the catching up took
  }
}
