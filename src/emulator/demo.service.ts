import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { errors, ServiceError } from '../core/errors.js';
import type { DemoState, DemoStepResult, DemoStepView } from './demo.schema.js';
import { findScenario } from './scenario-library.js';
import { findPlayState, playGroups, playStep } from './scenario-play.service.js';
import type { PlayedStepView, PlayState } from './scenario-play.schema.js';
import { injectTransport } from './scenario-transport.js';

// The guided demo's routes (docs/dashboard.md#run-a-demo) as the shipped scenario `demo` (scenarios/demo.yaml),
// played by the same engine as any scenario (docs/decisions.md#scenario-play): GET /_emulator/demo and
// POST /_emulator/demo/steps/{n} answer as they always did, in a session started from the demo (a sandbox that plays
// no scenario, or another one, refuses the steps with a 409 saying how to start one). The demo's calls are let
// through the sandbox's fault rules, as they always were (docs/faults.md#what-rules-never-touch).

export const DEMO_SCENARIO = 'demo';

function demoStep(step: PlayedStepView, index: number, ids: Array<string | null>): DemoStepView {
  return {
    number: step.number,
    id: ids[index] ?? `step-${step.number}`,
    caption: step.caption ?? '',
    done: step.done,
    summary: step.summary,
    transactionId: step.transactionId,
  };
}

function demoState(play: PlayState, ids: Array<string | null>): DemoState {
  return {
    steps: play.steps.map((step, index) => demoStep(step, index, ids)),
    completed: play.completed,
    next: play.next,
    finished: play.finished,
    running: play.running,
    userId: play.userId,
    accountId: play.accountId,
  };
}

function demoFile(ctx: AppContext) {
  const found = findScenario(ctx.config, DEMO_SCENARIO);
  const ids = playGroups(found.loaded).map((group) => found.loaded.scenario.steps[group[0]!]!.id ?? null);
  return { found, ids };
}

function notDemo(play: PlayState): ServiceError {
  return errors.conflict(`This sandbox plays the scenario ${play.name}, not the demo: GET /_emulator/scenario shows it`);
}

export function getDemoState(ctx: AppContext): DemoState {
  const { found, ids } = demoFile(ctx);
  const play = findPlayState(ctx);
  if (play && play.name !== DEMO_SCENARIO) throw notDemo(play);
  if (play) return demoState(play, ids);
  const steps = playGroups(found.loaded).map((group, index) => {
    const first = found.loaded.scenario.steps[group[0]!]!;
    return { number: index + 1, id: ids[index] ?? `step-${index + 1}`, caption: first.caption ?? '', done: false, summary: null, transactionId: null };
  });
  return { steps, completed: 0, next: 1, finished: false, running: false, userId: null, accountId: null };
}

/** Run step `number` (1-based) of the demo in this sandbox; `prefix`: the sandbox's path prefix. */
export async function runDemoStep(app: FastifyInstance, ctx: AppContext, number: number, prefix = ''): Promise<DemoStepResult> {
  const { found, ids } = demoFile(ctx);
  const total = playGroups(found.loaded).length;
  if (number > total) throw errors.notFound(`The demo has ${total} steps; there is no step ${number}`);
  const playing = findPlayState(ctx);
  if (playing && playing.name !== DEMO_SCENARIO) throw notDemo(playing);
  if (!playing) {
    // docs/decisions.md#scenario-play: the demo is a seeded story (its ids, and so the order of its account's deposit
    // instructions, follow its seed), so it plays in a session started from it, never in place
    throw errors.conflict(
      'This sandbox plays no scenario: the guided demo plays in a session started from it (POST /_emulator/sessions { "scenario": "demo" }, or "Run a demo" on the dashboard), then POST {baseUrl}/_emulator/demo/steps/1',
    );
  }
  const transport = injectTransport(app, { prefix, adminToken: ctx.config.adminToken, bypassFaultRules: true });
  const result = await playStep(ctx, transport, number);
  if (result.step.passed === false) {
    throw errors.conflict(`Step ${number} of the demo could not run: ${result.step.summary ?? 'a check failed'}. Reset the sandbox (POST /_emulator/reset) to start it over`);
  }
  return { step: demoStep(result.step, number - 1, ids), demo: demoState(result.scenario, ids) };
}
