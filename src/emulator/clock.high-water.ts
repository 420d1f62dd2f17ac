import type { AppContext } from '../context.js';
import type { BackgroundService } from '../domains/domain.js';
import { storeHighWater } from '../db/clock-store.js';

// While time flows, the emulated instant reached is recorded once a second (and at shutdown), not on every
// request: the stored offset already resumes a flowing clock at or past where it was as long as the host's
// wall clock does not step back, so the mark only has to bound that case, and one small write a second
// costs nothing next to a write per request. A crash loses at most the last second of the mark
// (docs/decisions.md#clock-high-water-mark). Frozen clocks are recorded by every move (src/db/clock-store.ts).
export const HIGH_WATER_INTERVAL_MS = 1000;

export const clockHighWaterService: BackgroundService = (ctx: AppContext) => {
  if (ctx.config.db === ':memory:') return () => undefined;
  const record = () => {
    if (ctx.clock.state().mode !== 'realtime') return;
    if (ctx.db.inTransaction) return; // a big save, restore or reset takes turns (docs/control-plane.md#big-states): the next tick
    try {
      storeHighWater(ctx.db, ctx.clock.nowMs());
    } catch {
      // busy (another process holds the write lock) or closing: the next tick records it
    }
  };
  const timer = setInterval(record, HIGH_WATER_INTERVAL_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    record();
  };
};
