// The emulated clock (docs/decisions.md#emulated-clock). Business time comes only from here; the HMAC skew check uses
// the real wall clock on purpose (docs/decisions.md#hmac-timestamp), so it reads `realNow()`, never `now()`.

/**
 * The instants the emulated clock can hold: years 0000-9999, as RFC 3339 writes them. Past the last one
 * `toISOString()` would print `+010000-...`, which no client reads as a date-time (docs/decisions.md#clock-range).
 */
export const MIN_INSTANT_MS = Date.parse('0000-01-01T00:00:00.000Z');
export const MAX_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');
export const MAX_INSTANT = '9999-12-31T23:59:59.999Z';

/** Whether epoch ms lie in the clock's range (0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z). */
export function inClockRange(ms: number): boolean {
  return ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS;
}

/**
 * An instant computed from the clock (a job's due time, an expiry, the start of a window before now) held inside the
 * clock's range (docs/decisions.md#clock-range): at the ceiling a job due "in 1 s" is due at the ceiling, which the
 * clock can reach, instead of in the year 10000, which it never can and which no snapshot file may hold.
 */
export function clampToClockRange(ms: number): number {
  return Math.min(Math.max(ms, MIN_INSTANT_MS), MAX_INSTANT_MS);
}

export type ClockState =
  | { mode: 'realtime'; offsetMs: number }
  | { mode: 'frozen'; frozenAtMs: number };

export interface Clock {
  /** Emulated time in epoch milliseconds. */
  nowMs(): number;
  /** Emulated time as a Date. */
  now(): Date;
  /** Emulated time as ISO 8601 UTC with milliseconds. */
  nowIso(): string;
  /** The real wall clock (auth skew checks only). */
  realNowMs(): number;
  /** Stop time at an instant. */
  freezeAt(ms: number): void;
  /** Move time forward (frozen or flowing). */
  advance(ms: number): void;
  /** Let time flow again from the current emulated instant. */
  resume(): void;
  /** Restore the state the clock was created with (used by reset). */
  restoreInitial(): void;
  state(): ClockState;
}

export type ClockStart = { mode: 'realtime' } | { mode: 'frozen'; atMs: number };

/**
 * `onChange` is told every new state (the server persists it, so a restart on a database file never moves
 * the emulated clock backwards behind what is already recorded).
 */
export function createClock(start: ClockStart, wallClock: () => number = Date.now, onChange?: (state: ClockState) => void): Clock {
  let current: ClockState = initialState();
  const set = (next: ClockState) => {
    current = next;
    onChange?.(next);
  };

  function initialState(): ClockState {
    return start.mode === 'frozen' ? { mode: 'frozen', frozenAtMs: start.atMs } : { mode: 'realtime', offsetMs: 0 };
  }

  // Every way of setting the clock refuses an instant past the range; time flowing on from its last millisecond,
  // or a stored state from elsewhere, stops there (docs/decisions.md#clock-range).
  function nowMs(): number {
    return Math.min(MAX_INSTANT_MS, current.mode === 'frozen' ? current.frozenAtMs : wallClock() + current.offsetMs);
  }

  return {
    nowMs,
    now: () => new Date(nowMs()),
    nowIso: () => new Date(nowMs()).toISOString(),
    realNowMs: () => wallClock(),
    freezeAt(ms) {
      set({ mode: 'frozen', frozenAtMs: ms });
    },
    advance(ms) {
      if (current.mode === 'frozen') set({ mode: 'frozen', frozenAtMs: current.frozenAtMs + ms });
      else set({ mode: 'realtime', offsetMs: current.offsetMs + ms });
    },
    resume() {
      set({ mode: 'realtime', offsetMs: nowMs() - wallClock() });
    },
    restoreInitial() {
      set(initialState());
    },
    state: () => current,
  };
}
