import type { FastifyInstance } from 'fastify';
import { errors, ServiceError } from '../core/errors.js';
import { stateReplacements, writeAfterWait } from '../scheduler/scheduler.js';
import { captureSnapshot, setStartingSnapshot } from '../snapshots/snapshot.js';
import { beginPlay, buildPlayGiven, givenIds, playGroups, savePlay } from '../emulator/scenario-play.service.js';
import { injectTransport } from '../emulator/scenario-transport.js';
import type { ChosenScenario } from './sessions.service.js';
import type { Session, SessionRegistry } from './sessions.registry.js';

// A session that starts from a scenario (docs/sessions.md#scenarios): its `given` is built by the engine through the
// app in process, under the session's prefix, before the 201; the play is then ready at step 1
// (docs/sessions.md#playing-a-scenario), and reset goes back to this point, not to the bare fixtures.

export async function startScenario(app: FastifyInstance, registry: SessionRegistry, session: Session, prefix: string, chosen: ChosenScenario): Promise<void> {
  const { ctx } = session.sandbox;
  try {
    const before = stateReplacements(ctx);
    const record = await buildPlayGiven(injectTransport(app, { prefix, adminToken: ctx.config.adminToken }), beginPlay(ctx, chosen.loaded, chosen.source));
    // the session is listed while its given is built: a reset or restore of it meanwhile (docs/control-plane.md#a-write-after-a-wait)
    // leaves a state the given is not in, and the session is ended as for any failure of its given
    await writeAfterWait(ctx, "the scenario's given was built", () => {
      if (stateReplacements(ctx) !== before) throw errors.conflict("The session was reset or restored while its scenario's given was built, so it was ended; create it again");
      savePlay(ctx, record);
      setStartingSnapshot(ctx, captureSnapshot(ctx, `scenario-${chosen.loaded.scenario.name}`));
    });
    session.scenario = { name: chosen.loaded.scenario.name, source: chosen.source, steps: playGroups(chosen.loaded).length, given: givenIds(record.run) };
  } catch (error) {
    await registry.end(session.id);
    if (error instanceof ServiceError) throw error;
    const failure = error as Error & { line?: number; column?: number };
    if (typeof failure.line === 'number') {
      const at = `scenario:${failure.line}:${failure.column ?? 1}`;
      throw errors.invalid(`The scenario's given could not be built: ${at}: ${failure.message}`, [{ type: 'InvalidValue', fieldRef: 'scenario', message: `${at}: ${failure.message}` }]);
    }
    throw error;
  }
}
