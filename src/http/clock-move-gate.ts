import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../core/errors.js';
import { clockMoveUnderWay } from '../scheduler/scheduler.js';
import { sandboxOf } from './request-sandbox.js';

// docs/decisions.md#scheduler-slices: while a sandbox's clock moves (its jobs run in slices with turns of the event
// loop between), or a big save, restore or reset of it takes turns (docs/control-plane.md#big-states), its other
// requests wait for the end of that hold, so they see the settled state; every other sandbox is served meanwhile. They wait before anything of theirs runs (onRequest: auth, validation and fault rules too), and
// again before their handler (preHandler) for a move that started while they were parsed. A route whose config says
// `duringClockMoves` is never held: the health check, the listen relay's results, the sessions' routes.

/** Route config of a route answered while its sandbox's clock moves: it reads and writes nothing a move changes. */
export const ANSWERED_DURING_CLOCK_MOVES = { duringClockMoves: true } as const;

function waitForClockMoves(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const sandbox = sandboxOf(request);
  if (!sandbox || !clockMoveUnderWay(sandbox)) return done();
  if ((request.routeOptions.config as { duringClockMoves?: boolean } | undefined)?.duringClockMoves) return done();
  const waitFor = (after: Promise<unknown> | null) => {
    const move = clockMoveUnderWay(sandbox);
    // the same move again: it has settled and is being let go; never wait twice on one promise
    if (move && move !== after) {
      move.then(
        () => waitFor(move),
        () => waitFor(move),
      );
      return;
    }
    // its session was ended while the request waited (src/sessions: the database closes after a few seconds)
    if (!sandbox.db.open) return done(errors.sandboxEnded('its clock moved'));
    done();
  };
  waitFor(null);
}

export function registerClockMoveGate(app: FastifyInstance): void {
  app.addHook('onRequest', waitForClockMoves);
  app.addHook('preHandler', waitForClockMoves);
}
