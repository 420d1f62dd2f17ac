import { openDatabase, sql, type Db } from './db/connection.js';
import { databaseCounter } from './db/id-counter.js';
import { createClock, type Clock } from './lib/clock.js';
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
  const clock = options.clock ?? createClock(clockStart(config));
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
