import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';

// docs/robustness.md#connections: how long a request may take to arrive, and how many connections are served at once.
// Without these, a request whose headers arrived but whose body never came held its socket for good, and about 20,000
// of them used up the process's open files: the server stopped answering everyone.

/**
 * Real ms a request may take from its first byte to its last (Node's `requestTimeout`): enough for a 512 MiB snapshot
 * upload over loopback or a 20 MiB entries upload on a slow link. Only receiving counts: once the request is in, its
 * answer may take as long as it takes, and an event stream stays open (docs/dashboard.md#live-updates).
 */
export const REQUEST_TIMEOUT_MS = 120_000;

/** Real ms the request line and headers may take to arrive: Node's default, kept. */
export const HEADERS_TIMEOUT_MS = 60_000;

/** Connections served at once, unless the process may open fewer than twice as many files. */
export const MAX_CONNECTIONS = 4096;

export interface ConnectionLimits {
  /** Real ms a request may take to arrive; past it the server answers 408 and closes the connection. */
  requestTimeoutMs: number;
  /** Connections open at once; one more is closed by Node as soon as it is accepted, unanswered. */
  maxConnections: number;
}

/** The limits a server applies: the defaults, the connection cap halved under a low open-file limit, and what a test sets. */
export function connectionLimits(overrides: Partial<ConnectionLimits> = {}): ConnectionLimits {
  return {
    requestTimeoutMs: overrides.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    maxConnections: overrides.maxConnections ?? connectionCap(openFileLimit()),
  };
}

/** Half the open-file limit when that is lower: SQLite files, worker threads and outgoing webhooks need files too. */
export function connectionCap(fileLimit: number | null): number {
  return fileLimit === null ? MAX_CONNECTIONS : Math.max(1, Math.min(MAX_CONNECTIONS, Math.floor(fileLimit / 2)));
}

/** The process's soft limit of open files (Node raises it to the hard limit at start), where Linux says it; else null. */
function openFileLimit(): number | null {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : null;
  } catch {
    return null;
  }
}

/**
 * How often Node looks for requests past their time (its default is 30 s): a quarter of the timeout, at most 30 s, so
 * a request is closed between 1 and 1.25 timeouts after it began.
 */
export function checkingIntervalMs(requestTimeoutMs: number): number {
  return Math.max(10, Math.min(30_000, Math.floor(requestTimeoutMs / 4)));
}

/**
 * Cap the server's connections. Node closes a connection past the cap as soon as it is accepted, without reading or
 * answering it; the server logs a warning (at most one a minute, with the count) so that the cause is visible.
 */
export function capConnections(server: Server, maxConnections: number, warn: (message: string) => void): void {
  server.maxConnections = maxConnections;
  let dropped = 0;
  let lastWarning = -Infinity;
  server.on('drop', () => {
    dropped += 1;
    const now = Date.now();
    if (now - lastWarning < 60_000) return;
    lastWarning = now;
    warn(`${dropped} connection(s) closed unanswered: ${maxConnections} connections are already open (docs/robustness.md#connections)`);
    dropped = 0;
  });
}
