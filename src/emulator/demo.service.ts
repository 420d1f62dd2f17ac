import type { FastifyInstance } from 'fastify';
import { prepared } from '../db/connection.js';
import type { AppContext } from '../context.js';
import { errors, ServiceError } from '../core/errors.js';
import { HEADER, SCOPES } from '../http/auth.js';
import { entitlementsOf } from '../domains/auth/credentials.store.js';
import { signRequest } from '../lib/hmac.js';
import { actAs } from './act-as.service.js';
import { changeClock } from './clock.service.js';
import { DEMO_STEPS, DemoStepError, type ApiAnswer, type DemoOutcome, type DemoRefs, type DemoStep, type DemoTools } from './demo.script.js';
import type { DemoState, DemoStepResult, DemoStepView } from './demo.schema.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import { internalCallHeaders } from '../faults/internal-call.js';

// Running the guided demo one step at a time (docs/dashboard.md#run-a-demo). The progress (how many steps ran, what
// they made) is a row of `meta` in the sandbox's own database, so it belongs to the sandbox the steps ran against: a
// session's demo is that session's, a reset (which clears `meta`) starts it over, and a snapshot keeps it with the
// data it describes. Steps run strictly in order: asking for any step but the next is a 409, and so is a second
// request while one step is still running.

const PROGRESS_KEY = 'demo_progress';

interface Progress {
  completed: number;
  refs: DemoRefs;
  outcomes: DemoOutcome[];
}

/**
 * The step the sandbox is running right now (steps are async: their API calls go through the app). The progress
 * itself is in `meta`; only this is in memory (docs/architecture.md#runtime), and a reset does not stop a step.
 */
export const demoRunSlot: StateSlot<{ runningStep: number | null }> = {
  name: 'emulator.demo',
  create: () => ({ runningStep: null }),
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

function readProgress(ctx: AppContext): Progress {
  const row = prepared<{ value: string }>(ctx.db, 'SELECT value FROM meta WHERE key = ?').get(PROGRESS_KEY);
  if (!row) return { completed: 0, refs: {}, outcomes: [] };
  try {
    const parsed = JSON.parse(row.value) as Progress;
    if (Number.isInteger(parsed.completed) && parsed.refs && Array.isArray(parsed.outcomes)) return parsed;
  } catch {
    // a damaged row reads as a demo not started
  }
  return { completed: 0, refs: {}, outcomes: [] };
}

function writeProgress(ctx: AppContext, progress: Progress): void {
  prepared(ctx.db, 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(PROGRESS_KEY, JSON.stringify(progress));
}

function stepView(step: DemoStep, index: number, progress: Progress): DemoStepView {
  const outcome = progress.outcomes[index];
  return {
    number: index + 1,
    id: step.id,
    caption: step.caption,
    done: index < progress.completed,
    summary: outcome?.summary ?? null,
    transactionId: outcome?.transactionId ?? null,
  };
}

function stateOf(ctx: AppContext, progress: Progress): DemoState {
  const finished = progress.completed >= DEMO_STEPS.length;
  return {
    steps: DEMO_STEPS.map((step, index) => stepView(step, index, progress)),
    completed: progress.completed,
    next: finished ? null : progress.completed + 1,
    finished,
    running: ctx.runtime.get(demoRunSlot).runningStep !== null,
    userId: progress.refs.userId ?? null,
    accountId: progress.refs.usdAccountId ?? null,
  };
}

export function getDemoState(ctx: AppContext): DemoState {
  return stateOf(ctx, readProgress(ctx));
}

interface KeyRow {
  api_key: string;
  secret: string;
  programme_id: string;
}

/** The first programme's MULTI_USER key entitled to every scope: the demo's business is created in that programme. */
function programmeKey(ctx: AppContext): KeyRow {
  const key = prepared<KeyRow>(
    ctx.db,
    `SELECT k.api_key, k.secret, k.programme_id FROM api_keys k JOIN programmes p ON p.id = k.programme_id
      WHERE k.integration_type = 'MULTI_USER' ORDER BY p.rowid, k.api_key`,
  )
    .all()
    .find((candidate) => entitlementsOf(ctx, candidate.api_key).size === SCOPES.length);
  if (!key) throw new DemoStepError('No programme has a MULTI_USER key entitled to every scope, so the demo cannot create its business; add one to the fixtures');
  return key;
}

function expectStatus(method: string, path: string, answer: ApiAnswer, expect: number[]): ApiAnswer {
  if (expect.includes(answer.status)) return answer;
  const message = answer.body && typeof answer.body === 'object' && typeof answer.body.message === 'string' ? answer.body.message : String(answer.body ?? '');
  throw new DemoStepError(`${method} ${path} answered ${answer.status} (expected ${expect.join(' or ')}): ${message}`);
}

function toolsFor(app: FastifyInstance, ctx: AppContext, refs: DemoRefs, prefix: string): DemoTools {
  return {
    refs,
    timeline: ctx.fixtures.timeline,
    async asProgramme(method, path, body, expect) {
      const key = programmeKey(ctx);
      const payload = body === undefined ? undefined : JSON.stringify(body);
      // signed as any client signs (docs/authentication.md): the real wall clock's milliseconds
      const timestamp = String(ctx.clock.realNowMs());
      const headers: Record<string, string> = {
        [HEADER.apiKey]: key.api_key,
        [HEADER.timestamp]: timestamp,
        [HEADER.programId]: key.programme_id,
        [HEADER.signature]: signRequest({ apiKey: key.api_key, secret: key.secret, timestamp, method, target: prefix + path, body: payload ?? '' }),
      };
      if (payload !== undefined) headers['content-type'] = 'application/json';
      // not subject to the sandbox's fault rules (docs/faults.md#what-rules-never-touch)
      const response = await app.inject({ method, url: prefix + path, headers: { ...headers, ...internalCallHeaders() }, payload });
      let parsed: unknown = null;
      try {
        parsed = response.body ? JSON.parse(response.body) : null;
      } catch {
        parsed = response.body;
      }
      return expectStatus(method, path, { status: response.statusCode, body: parsed }, expect);
    },
    async asUser(method, path, body, expect, idempotencyKey) {
      if (!refs.userId) throw new DemoStepError('The demo has no user yet');
      const answer = await actAs(app, ctx, { userId: refs.userId, method, path, ...(body === undefined ? {} : { body }), ...(idempotencyKey ? { idempotencyKey } : {}) }, prefix);
      return expectStatus(method, path, answer, expect);
    },
    freezeClock() {
      const next = Math.ceil(ctx.clock.nowMs() / 1000) * 1000;
      changeClock(ctx, { freezeAt: new Date(next).toISOString() });
    },
    advance(ms) {
      changeClock(ctx, { advanceMs: ms });
    },
  };
}

/** Run step `number` (1-based) against this sandbox: only the next step may run, one at a time. */
/** `prefix`: the sandbox's path prefix, under which the demo's requests go (actAs). */
export async function runDemoStep(app: FastifyInstance, ctx: AppContext, number: number, prefix = ''): Promise<DemoStepResult> {
  if (number > DEMO_STEPS.length) throw errors.notFound(`The demo has ${DEMO_STEPS.length} steps; there is no step ${number}`);
  const run = ctx.runtime.get(demoRunSlot);
  const running = run.runningStep;
  if (running !== null) throw errors.conflict(`Step ${running} of the demo is running; wait for it to finish`);
  const progress = readProgress(ctx);
  if (progress.completed >= DEMO_STEPS.length) {
    throw errors.conflict(`The demo has finished (all ${DEMO_STEPS.length} steps ran); reset the sandbox (POST /_emulator/reset) or start a new session to run it again`);
  }
  if (number !== progress.completed + 1) {
    throw errors.conflict(
      number <= progress.completed
        ? `Step ${number} of the demo has run already; the next step is ${progress.completed + 1}`
        : `Step ${number} cannot run before step ${progress.completed + 1}; the demo runs its steps in order`,
    );
  }
  const step = DEMO_STEPS[number - 1]!;
  const refs: DemoRefs = { ...progress.refs };
  run.runningStep = number;
  let outcome: DemoOutcome;
  try {
    outcome = await step.run(toolsFor(app, ctx, refs, prefix));
  } catch (error) {
    if (error instanceof DemoStepError || error instanceof ServiceError) {
      throw errors.conflict(`Step ${number} of the demo (${step.id}) could not run: ${error.message}. The demo stays at step ${number}`);
    }
    throw error;
  } finally {
    run.runningStep = null;
  }
  const next: Progress = { completed: number, refs, outcomes: [...progress.outcomes.slice(0, number - 1), outcome] };
  writeProgress(ctx, next);
  return { step: stepView(step, number - 1, next), demo: stateOf(ctx, next) };
}
