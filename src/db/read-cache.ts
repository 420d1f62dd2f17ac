import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type { Db } from './connection.js';
import { prepared } from './connection.js';

// Answers of hot reads, kept while the database has not changed (docs/architecture.md#the-read-cache; the target,
// docs/benchmarks.md: the signed list of transactions at 1,000,000 rows within half of a bare HTTP route's throughput).
// A client polling the same page (a dashboard, a change-sync loop at its tail, a test waiting for a status) is answered
// from memory; any write anywhere makes every entry stale, so an answer is never older than the data it was built from.
//
// "Changed" is the database's change marker, two parts that only move forward:
// - `total_changes()`: every row this connection has inserted, updated or deleted. Reset, jobs, webhooks
//   and requests all write through the one connection, so this catches every write of this process; it
//   costs no read transaction.
// - Commits by another connection or process on the same file. The WAL index header (the first 48 bytes of
//   the `-shm` file, https://www.sqlite.org/walformat.html) changes with every commit: its iChange counter
//   and mxFrame move, and a WAL restart changes its salts. It is read with one pread (≈0.8 µs) instead of
//   `PRAGMA data_version`, whose read transaction takes file locks (≈2.2 µs alone, ≈7% of a cached list
//   request under load); data_version remains the fallback when there is no -shm file to read. Either is
//   read again only when a request has arrived since the last read (`noteArrival`, an onRequest hook in
//   app.ts). That is still exact for every request: its answer uses a reading taken after it arrived, so
//   a commit a client saw finish before sending it is always seen. A header caught mid-update only reads
//   as a change (a rebuild), never as no change.
//
// Limits, none reachable from the emulator's own code: schema changes by this connection (DROP/ALTER) do not
// move total_changes() (migrations run before anything is cached), and a statement iterator left open on the
// connection pins an older snapshot while db.inTransaction is false (nothing here iterates).

let arrivals = 0;

interface CommitWatch {
  arrival: number;
  /** Bumped whenever another connection's commit is seen. */
  version: number;
  /** The -shm file, or null when it cannot be read (then PRAGMA data_version). */
  fd: number | null;
  last: Buffer;
  reading: Buffer;
  dataVersion: number;
}

const watches = new WeakMap<Db, CommitWatch>();

// One read-only descriptor per -shm file (by device and inode) for the whole process, shared by every handle
// on that database. POSIX: closing ANY descriptor of a file drops every fcntl lock the process holds on it,
// SQLite's own locks on the -shm included (https://www.sqlite.org/howtocorrupt.html, 2.2.1), so a descriptor
// is never closed while SQLite may use the file, and never opened twice: only once SQLite has deleted the
// file (no connection of this process uses it any more) is it closed, when a handle that used it is collected.
const shmDescriptors = new Map<string, number>();
const releaseShm = new FinalizationRegistry<string>((key) => {
  const fd = shmDescriptors.get(key);
  if (fd === undefined) return;
  try {
    if (fstatSync(fd).nlink > 0) return; // still SQLite's file
    shmDescriptors.delete(key);
    closeSync(fd);
  } catch {
    // already gone
  }
});

const WAL_INDEX_HEADER_BYTES = 48;

/** An HTTP request has arrived: the next marker read looks for other connections' commits again. */
export function noteArrival(): void {
  arrivals += 1;
}

/** The descriptor of the database's -shm file, or null (not in WAL mode, or not readable: data_version). */
function shmDescriptor(db: Db): number | null {
  try {
    if (String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return null;
    // SQLite's own name for the file: absolute, symlinks resolved (db.name is the path as given).
    const main = (db.pragma('database_list') as Array<{ name: string; file: string }>).find((entry) => entry.name === 'main');
    if (!main?.file) return null;
    const path = `${main.file}-shm`;
    const { dev, ino } = statSync(path);
    const key = `${dev}:${ino}`;
    let fd = shmDescriptors.get(key);
    if (fd === undefined) {
      fd = openSync(path, 'r');
      shmDescriptors.set(key, fd);
    }
    releaseShm.register(db, key);
    return fd;
  } catch {
    return null;
  }
}

function watchOf(db: Db): CommitWatch {
  let watch = watches.get(db);
  if (!watch) {
    watch = {
      arrival: -1,
      version: 0,
      fd: shmDescriptor(db),
      last: Buffer.alloc(WAL_INDEX_HEADER_BYTES),
      reading: Buffer.alloc(WAL_INDEX_HEADER_BYTES),
      dataVersion: -1,
    };
    watches.set(db, watch);
  }
  return watch;
}

/** Whether another connection has committed since the last look (or may have: a change of source counts). */
function sawOtherCommits(db: Db, watch: CommitWatch): boolean {
  if (watch.fd !== null) {
    try {
      if (readSync(watch.fd, watch.reading, 0, WAL_INDEX_HEADER_BYTES, 0) === WAL_INDEX_HEADER_BYTES) {
        if (watch.reading.equals(watch.last)) return false;
        watch.reading.copy(watch.last);
        return true;
      }
    } catch {
      // unreadable now: fall back below for good (the descriptor stays open, see shmDescriptors)
    }
    watch.fd = null;
  }
  const dataVersion = prepared(db, 'PRAGMA data_version').pluck().get() as number;
  if (dataVersion === watch.dataVersion) return false;
  watch.dataVersion = dataVersion;
  return true;
}

/** The database's change marker: equal markers mean no row changed in between. */
export function changeMarker(db: Db): string {
  const changes = prepared(db, 'SELECT total_changes()').pluck().get() as number;
  // An in-memory database (the default) belongs to this one connection: nothing else can commit to it.
  if (db.memory) return `${changes}`;
  const watch = watchOf(db);
  if (watch.arrival !== arrivals) {
    if (sawOtherCommits(db, watch)) watch.version += 1;
    watch.arrival = arrivals; // only once read: a failed reading is tried again
  }
  return `${changes}:${watch.version}`;
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
