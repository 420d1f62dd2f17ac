import type { Db } from './connection.js';
import { prepared } from './connection.js';

// Answers of hot reads, kept while the database has not changed (docs/architecture.md#the-read-cache; the targets,
// docs/benchmarks.md). A client polling the same page (a dashboard, a change-sync loop at its tail, a test waiting
// for a status) is answered from memory; any write anywhere makes every entry stale, so an answer is never older
// than the data it was built from.
//
// "Changed" is the database's change marker, SQLite's own two counters:
// - `total_changes()`: every row this connection has inserted, updated or deleted. Reset, jobs, webhooks
//   and requests all write through the one connection, so this catches every write of this process; it
//   costs no read transaction.
// - `PRAGMA data_version` (https://www.sqlite.org/pragma.html#pragma_data_version): moves when another
//   connection or process commits to the same file, never for this connection's own commits. An in-memory
//   database (the default) belongs to this one connection and skips it.
// A data_version reading is kept until the current run of JavaScript ends (a microtask clears it): the API key
// and the page of one request share it, and every reading is taken after the request being answered arrived, so
// a commit a client saw finish before sending its request is always seen.
//
// Limits, none reachable from the emulator's own code: schema changes by this connection (DROP/ALTER) do not
// move total_changes() (migrations run before anything is cached), and a statement iterator left open on the
// connection pins an older snapshot while db.inTransaction is false (nothing here iterates).

/** data_version readings of the current run of JavaScript, per handle; cleared by a microtask. */
let readings: Map<Db, number> | null = null;

function dataVersion(db: Db): number {
  let version = readings?.get(db);
  if (version !== undefined) return version;
  version = prepared(db, 'PRAGMA data_version').pluck().get() as number;
  if (!readings) {
    readings = new Map();
    queueMicrotask(() => (readings = null));
  }
  readings.set(db, version);
  return version;
}

/** The database's change marker: equal markers mean no row changed in between. */
export function changeMarker(db: Db): string {
  const changes = prepared(db, 'SELECT total_changes()').pluck().get() as number;
  return db.memory ? `${changes}` : `${changes}:${dataVersion(db)}`;
}

interface Entry<V> {
  marker: string;
  value: V;
  bytes: number;
}

export interface ReadCacheLimits {
  /** Most entries kept; the least recently used goes first. */
  maxEntries: number;
  /** Most bytes kept (sum of each entry's size). */
  maxBytes: number;
}

/**
 * A bounded LRU of values keyed by a string and valid for one change marker of one database. Everything
 * runs synchronously: the marker is read, the value built and stored in one turn of the event loop, so no
 * write of this process can fall between them (a commit by another process can, and then the entry is
 * stored under the older marker and rebuilt on the next read: stale entries are never served).
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private bytes = 0;

  constructor(
    private readonly db: Db,
    private readonly limits: ReadCacheLimits,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: string, build: () => V): V {
    // Inside a transaction the answer may include writes that are later rolled back, and a rollback does
    // not move total_changes() back: such answers are built fresh and never kept.
    if (this.db.inTransaction) return build();
    const marker = changeMarker(this.db);
    const hit = this.entries.get(key);
    if (hit) {
      this.remove(key, hit);
      if (hit.marker === marker) {
        this.entries.set(key, hit); // most recently used goes last
        this.bytes += hit.bytes;
        return hit.value;
      }
    }
    const value = build();
    const bytes = this.sizeOf(value);
    if (bytes > this.limits.maxBytes) return value;
    this.entries.set(key, { marker, value, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
      this.remove(oldest, entry);
    }
    return value;
  }

  get size(): number {
    return this.entries.size;
  }

  private remove(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

const caches = new WeakMap<Db, Map<string, unknown>>();

/** The named cache of a database handle (one per handle, so a test's second app never sees the first's). */
export function readCacheOf<V>(db: Db, name: string, limits: ReadCacheLimits, sizeOf: (value: V) => number): ReadCache<V> {
  let named = caches.get(db);
  if (!named) caches.set(db, (named = new Map()));
  let cache = named.get(name) as ReadCache<V> | undefined;
  if (!cache) named.set(name, (cache = new ReadCache<V>(db, limits, sizeOf)));
  return cache;
}
