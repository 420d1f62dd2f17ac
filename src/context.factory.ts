import { openDatabase, sql, type Db } from './db/connection.js';
import { databaseCounter } from './db/id-counter.js';
import { createClock, type Clock, type ClockState } from './lib/clock.js';
import { createIdSource } from './lib/ids.js';
import { clockStart, configSchema, type Config } from './config.js';
import { loadFixtures } from './fixtures/fixtures.loader.js';
import type { Fixtures } from './fixtures/fixtures.schema.js';
import { seedFixtures } from './fixtures/fixtures.seed.js';
import { jobHandlers } from './scheduler/job-handlers.js';
import type { AppContext } from './context.js';

export interface ContextOptions {
  config?: Partial<Config>;
  db?: Db;
  clock?: Clock;
  fixtures?: Fixtures;
}

/** Open (or take) the database, seed it from the fixtures when empty, and assemble the context. */
export function createContext(options: ContextOptions = {}): AppContext {
  const config = configSchema.parse(options.config ?? {});
  const db = options.db ?? openDatabase(config.db);
  const clock = options.clock ?? persistentClock(db, config);
  const fixtures = options.fixtures ?? loadFixtures(config.fixtures);
  const ctx: AppContext = {
    db,
    clock,
    ids: createIdSource(config.seed, databaseCounter(db)),
    config,
    fixtures,
    notifyOutbox: () => undefined,
    jobHandlers,
  };
  const seeded = sql<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM programmes').get()!.n > 0;
  if (!seeded) db.transaction(() => seedFixtures(ctx))();
  return ctx;
}

const CLOCK_STATE_KEY = 'clock_state';

/**
 * The clock of `--clock`, unless the database already recorded a later emulated time: then the recorded
 * state is resumed, because the clock only moves forward (contract 10) and change sync relies on
 * updatedAt never going backwards (interface 4.5). Every change is recorded in `meta`.
 */
function persistentClock(db: Db, config: Config): Clock {
  const persist = (state: ClockState) =>
    sql(db, 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(
      CLOCK_STATE_KEY,
      JSON.stringify(state),
    );
  const clock = createClock(clockStart(config), Date.now, persist);
  const stored = sql<{ value: string }>(db, 'SELECT value FROM meta WHERE key = ?').get(CLOCK_STATE_KEY);
  if (stored) {
    const state = JSON.parse(stored.value) as ClockState;
    const storedNow = state.mode === 'frozen' ? state.frozenAtMs : Date.now() + state.offsetMs;
    if (storedNow > clock.nowMs()) {
      clock.freezeAt(storedNow);
      if (state.mode === 'realtime') clock.resume();
    }
  }
  return clock;
}
