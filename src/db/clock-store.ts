import { prepared, type Db } from './connection.js';
import type { ClockState } from '../lib/clock.js';
import type { Config } from '../config.js';

// The emulated clock never runs backwards, across restarts included (docs/configuration.md#clock,
// docs/decisions.md#clock-high-water-mark). Two rows of `meta` record it on a database file:
// - `clock_state`: the mode and its instant or offset, written with every move (freeze, advance, resume);
// - `clock_high_water_ms`: the latest emulated instant reached, only ever raised (MAX), also by a
//   one-second tick while time flows (src/emulator/clock.high-water.ts), so a flowing clock is not set back
//   even when the host's wall clock is (NTP step, a VM or laptop waking, a file moved to another machine).

const STATE_KEY = 'clock_state';
const HIGH_WATER_KEY = 'clock_high_water_ms';

export interface StoredClock {
  state: ClockState;
  /** Latest emulated instant recorded (absent in files written before the mark existed). */
  highWaterMs: number | undefined;
}

export function readStoredClock(db: Db): StoredClock | undefined {
  const rows = prepared<{ key: string; value: string }>(db, 'SELECT key, value FROM meta WHERE key IN (?, ?)').all(STATE_KEY, HIGH_WATER_KEY);
  const state = rows.find((row) => row.key === STATE_KEY);
  if (!state) return undefined;
  const mark = rows.find((row) => row.key === HIGH_WATER_KEY);
  return { state: JSON.parse(state.value) as ClockState, highWaterMs: mark ? Number(mark.value) : undefined };
}

/** Record a clock state and the instant it reads now; the mark never goes down (several processes may share a file). */
export function storeClock(db: Db, state: ClockState, nowMs: number): void {
  db.transaction(() => {
    prepared(db, 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(STATE_KEY, JSON.stringify(state));
    storeHighWater(db, nowMs);
  })();
}

/** A database without its clock record, as a new one is: an image sessions are opened from (docs/sessions.md#how-fast). */
export function forgetClock(db: Db): void {
  prepared(db, 'DELETE FROM meta WHERE key IN (?, ?)').run(STATE_KEY, HIGH_WATER_KEY);
}

export function storeHighWater(db: Db, nowMs: number): void {
  prepared(
    db,
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))',
  ).run(HIGH_WATER_KEY, String(Math.trunc(nowMs)));
}

/** What the clock does at start-up: where it resumes, where it moves forward to (running due jobs), and a warning. */
export interface ClockStartPlan {
  /** The instant the clock starts at, frozen, before any move. */
  fromMs: number;
  /** The instant to move forward to (equal to fromMs when there is nothing to move). */
  toMs: number;
  /** Mode once there: frozen at toMs, or flowing with this offset from the wall clock. */
  then: { mode: 'frozen' } | { mode: 'realtime'; offsetMs: number };
  warning?: string;
}

/**
 * Decide the start of the clock from `--clock` and the database's record (docs/configuration.md#clock):
 * - nothing stored: start as `--clock` says (real time when omitted);
 * - `--clock` omitted: resume the stored clock (frozen at its instant, or flowing with its offset, never
 *   behind the mark); the time that passed while a flowing clock was stopped is caught up job by job;
 * - `--clock` later than the stored clock (`realtime` reads the wall clock): move forward to it;
 * - `--clock` earlier: ignored, with one warning line naming both instants.
 */
export function planClockStart(stored: StoredClock | undefined, clock: Config['clock'], wallMs: number): ClockStartPlan {
  const requestedMs = clock === undefined || clock === 'realtime' ? wallMs : Date.parse(clock);
  const requestedThen = clock !== undefined && clock !== 'realtime' ? ({ mode: 'frozen' } as const) : ({ mode: 'realtime', offsetMs: 0 } as const);
  if (!stored) return { fromMs: requestedMs, toMs: requestedMs, then: requestedThen };

  const mark = stored.highWaterMs ?? -Infinity;
  const { state } = stored;
  // where the stored clock reads now (a flowing one went on while the server was stopped, but never
  // reads behind the mark), and the last instant recorded, from which due jobs are caught up
  const resumeMs = Math.max(state.mode === 'frozen' ? state.frozenAtMs : wallMs + state.offsetMs, mark);
  const fromMs = state.mode === 'frozen' || !Number.isFinite(mark) ? resumeMs : mark;
  const resumeThen = state.mode === 'frozen' ? ({ mode: 'frozen' } as const) : ({ mode: 'realtime', offsetMs: resumeMs - wallMs } as const);

  if (clock === undefined || requestedMs === resumeMs) return { fromMs, toMs: resumeMs, then: resumeThen };
  if (requestedMs > resumeMs) return { fromMs, toMs: requestedMs, then: requestedThen };
  const named = clock === 'realtime' ? `realtime (${new Date(requestedMs).toISOString()})` : new Date(requestedMs).toISOString();
  return {
    fromMs,
    toMs: resumeMs,
    then: resumeThen,
    warning:
      `warning: --clock / CLOCK ${named} is earlier than the clock stored in the database, ${new Date(resumeMs).toISOString()}; ` +
      `ignored, the clock resumes ${state.mode === 'frozen' ? 'frozen' : 'flowing'} from ${new Date(resumeMs).toISOString()} (it never runs backwards)`,
  };
}
