// The emulated clock (docs/decisions.md#emulated-clock). Business time comes only from here; the HMAC skew check uses
// the real wall clock on purpose (docs/decisions.md#hmac-timestamp), so it reads `realNow()`, never `now()`.

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

  function nowMs(): number {
    return current.mode === 'frozen' ? current.frozenAtMs : wallClock() + current.offsetMs;
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
