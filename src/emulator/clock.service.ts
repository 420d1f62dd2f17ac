import type { AppContext } from '../context.js';
import { advanceClockYielding, runDueJobsYielding, SandboxClosedError } from '../scheduler/scheduler.js';
import { errors } from '../core/errors.js';
import { MAX_INSTANT, MAX_INSTANT_MS } from '../lib/clock.js';

export function clockView(ctx: AppContext, jobsRun?: number) {
  const state = ctx.clock.state();
  const view = {
    now: ctx.clock.nowIso(),
    mode: state.mode,
    offsetMs: ctx.clock.nowMs() - ctx.clock.realNowMs(),
  } as { now: string; mode: 'realtime' | 'frozen'; offsetMs: number; jobsRun?: number };
  if (jobsRun !== undefined) view.jobsRun = jobsRun;
  return view;
}

/**
 * docs/decisions.md#emulated-clock: freeze, advance (running due jobs in time order) or resume real time. The jobs run
 * in slices with turns between (docs/decisions.md#scheduler-slices): other sandboxes are served meanwhile, this one's
 * requests wait for the answer.
 */
export async function changeClock(ctx: AppContext, body: { freezeAt?: string; advanceMs?: number; realtime?: true }) {
  try {
    if (body.freezeAt !== undefined) {
      const target = Date.parse(body.freezeAt);
      if (target > MAX_INSTANT_MS) throw pastTheEnd('freezeAt', body.freezeAt);
      if (target < ctx.clock.nowMs()) {
        throw errors.field('InvalidValue', 'freezeAt', 'freezeAt is earlier than the emulated now; the clock only moves forward (use /_emulator/reset to start over)');
      }
      // Moving forward to the instant runs the jobs due on the way, then freezes there.
      ctx.clock.freezeAt(ctx.clock.nowMs());
      return clockView(ctx, await advanceClockYielding(ctx, target - ctx.clock.nowMs()));
    }
    if (body.advanceMs !== undefined) {
      if (ctx.clock.nowMs() + body.advanceMs > MAX_INSTANT_MS) throw pastTheEnd('advanceMs', `${ctx.clock.nowIso()} + ${body.advanceMs} ms`);
      return clockView(ctx, await advanceClockYielding(ctx, body.advanceMs));
    }
    ctx.clock.resume();
    return clockView(ctx, await runDueJobsYielding(ctx));
  } catch (error) {
    if (error instanceof SandboxClosedError) {
      throw errors.sandboxEnded('its clock moved');
    }
    throw error;
  }
}

/** The clock stops at the last millisecond of 9999 (docs/decisions.md#clock-range). */
function pastTheEnd(field: string, what: string) {
  return errors.field('InvalidValue', field, `${field} would move the clock past ${MAX_INSTANT}, the last instant it can hold (${what})`);
}
