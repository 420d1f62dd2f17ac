import type { AppContext } from '../context.js';
import { prepared } from '../db/connection.js';
import { errors, ServiceError } from '../core/errors.js';
import { stateReplacements, writeAfterWait } from '../scheduler/scheduler.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import type { LoadedScenario } from '../scenarios/scenario.load.js';
import { keyBookFromFixtures } from '../scenarios/scenario.keys.js';
import { buildGiven, runStep, startRun, type RunState, type ScenarioTransport, type StepResult } from '../scenarios/scenario.run.js';
import { RegexRunner } from '../scenarios/scenario.match.js';
import type { EngineStepView, PlayedStepView, PlayState, PlayStepResult } from './scenario-play.schema.js';

// Playing a scenario in a sandbox one step per request (docs/sessions.md#playing-a-scenario), as the dashboard plays
// it. A played step is a step with a caption and the steps without one that follow it (a file without captions
// plays one step at a time), so a demo captions what the audience sees and its helper steps (a read that captures an
// id, a wait) go with it. The play (the file as loaded, the engine's run state, what each step did) is a row of
// `meta` in the sandbox's own database, as the demo's progress was: it belongs to the sandbox the steps changed, a
// reset starts the sandbox's scenario over (docs/decisions.md#scenario-play), and a snapshot keeps it with its data.

const PLAY_KEY = 'scenario_play';

export type PlaySource = 'shipped' | 'folder' | 'given';

interface PlayRecord {
  loaded: LoadedScenario;
  source: PlaySource;
  run: RunState;
  /** Played steps done. */
  completed: number;
  /** By played step: what its engine steps did. */
  done: Array<{ results: EngineStepView[]; transactionId: string | null; summary: string }>;
  failed: { step: number; message: string; line: number | null; column: number | null } | null;
  startedAtMs: number;
  /** The users' rowid before the scenario made any: the first above it is the scenario's user. */
  usersBefore: number;
  accountId: string | null;
}

/** The played step running now (its calls go through the app). Only this is in memory (docs/architecture.md#runtime). */
export const scenarioPlaySlot: StateSlot<{ runningStep: number | null }> = {
  name: 'emulator.scenarioPlay',
  create: () => ({ runningStep: null }),
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

/** The file's steps, grouped into played steps: each caption starts one. */
export function playGroups(loaded: LoadedScenario): number[][] {
  const steps = loaded.scenario.steps;
  const captioned = steps.some((step) => step.caption !== undefined);
  const groups: number[][] = [];
  steps.forEach((step, index) => {
    if (!captioned || step.caption !== undefined || groups.length === 0) groups.push([index]);
    else groups[groups.length - 1]!.push(index);
  });
  return groups;
}

function readRecord(ctx: AppContext): PlayRecord | null {
  const row = prepared<{ value: string }>(ctx.db, 'SELECT value FROM meta WHERE key = ?').get(PLAY_KEY);
  if (!row) return null;
  try {
    const parsed = JSON.parse(row.value) as PlayRecord;
    if (parsed && parsed.loaded && Number.isInteger(parsed.completed) && Array.isArray(parsed.done)) return parsed;
  } catch {
    // a damaged row reads as no scenario
  }
  return null;
}

function writeRecord(ctx: AppContext, record: PlayRecord): void {
  prepared(ctx.db, 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(PLAY_KEY, JSON.stringify(record));
}

function maxUserRowid(ctx: AppContext): number {
  return prepared<{ n: number | null }>(ctx.db, 'SELECT MAX(rowid) AS n FROM users').get()?.n ?? 0;
}

/** The scenario's user: the first made after it started. */
function userOf(ctx: AppContext, record: PlayRecord): string | null {
  return prepared<{ id: string }>(ctx.db, 'SELECT id FROM users WHERE rowid > ? ORDER BY rowid LIMIT 1').get(record.usersBefore)?.id ?? null;
}

function accountOf(ctx: AppContext, record: PlayRecord, userId: string | null): string | null {
  if (record.accountId) return record.accountId;
  if (!userId) return null;
  return prepared<{ id: string }>(ctx.db, 'SELECT id FROM accounts WHERE user_id = ? AND parent_account_id IS NULL ORDER BY rowid LIMIT 1').get(userId)?.id ?? null;
}

function transactionAccount(ctx: AppContext, transactionId: string): string | null {
  return prepared<{ account_id: string }>(ctx.db, 'SELECT account_id FROM transactions WHERE id = ?').get(transactionId)?.account_id ?? null;
}

/** What `given` made, by name: each name and its id. */
export function givenIds(run: RunState): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(run.given ?? {})) {
    const id = value.id ?? value.userId;
    if (typeof id === 'string') out[name] = id;
  }
  return out;
}

/**
 * Start a scenario in this sandbox: nothing sent yet; `startedAtMs` is its window's start. The record is written only
 * by `loadPlay`, once `given` is built.
 */
export function beginPlay(ctx: AppContext, loaded: LoadedScenario, source: PlaySource): PlayRecord {
  // the engine signs with the sandbox's own keys (docs/decisions.md#scenario-keys)
  const keys = keyBookFromFixtures(ctx.fixtures);
  if (!keys) throw errors.invalid('The sandbox\'s fixtures have no programme with API keys: a scenario has no key to sign with');
  return { loaded, source, run: startRun(loaded, keys), completed: 0, done: [], failed: null, startedAtMs: ctx.clock.nowMs(), usersBefore: maxUserRowid(ctx), accountId: null };
}

/** Build the scenario's `given` through the transport; a failure throws (GivenError) and writes nothing. */
export async function buildPlayGiven(transport: ScenarioTransport, record: PlayRecord): Promise<PlayRecord> {
  return { ...record, run: await buildGiven(transport, record.loaded, record.run) };
}

export function savePlay(ctx: AppContext, record: PlayRecord): void {
  writeRecord(ctx, record);
}

export function hasPlay(ctx: AppContext): string | null {
  return readRecord(ctx)?.loaded.scenario.name ?? null;
}

function summaryOf(results: StepResult[]): string {
  return results
    .map((result) => {
      if (result.failure) return `${describe(result)}: ${result.failure.message}`;
      return describe(result);
    })
    .join('; ');
}

function describe(result: StepResult): string {
  if (result.request) return `${result.request.method} ${result.request.path}${result.answer ? ` -> ${result.answer.status}` : ''}`;
  return result.action;
}

function engineView(result: StepResult): EngineStepView {
  return {
    index: result.index,
    id: result.id ?? null,
    action: result.action,
    passed: result.passed,
    request: result.request ? { method: result.request.method, path: result.request.path } : null,
    status: result.answer?.status ?? null,
    failure: result.failure ? { message: result.failure.message, line: result.failure.line, column: result.failure.column } : null,
  };
}

function stateOf(ctx: AppContext, record: PlayRecord): PlayState {
  const groups = playGroups(record.loaded);
  const { steps } = record.loaded.scenario;
  const finished = record.failed !== null || record.completed >= groups.length;
  const userId = userOf(ctx, record);
  return {
    name: record.loaded.scenario.name,
    description: record.loaded.scenario.description ?? null,
    source: record.source,
    steps: groups.map((group, index): PlayedStepView => {
      const first = steps[group[0]!]!;
      const done = record.done[index];
      return {
        number: index + 1,
        caption: first.caption ?? null,
        note: first.note ?? null,
        done: done !== undefined,
        passed: done ? done.results.every((result) => result.passed) : null,
        summary: done?.summary ?? null,
        transactionId: done?.transactionId ?? null,
        results: done?.results ?? [],
      };
    }),
    completed: record.completed,
    next: finished ? null : record.completed + 1,
    finished,
    failed: record.failed,
    running: ctx.runtime.get(scenarioPlaySlot).runningStep !== null,
    given: givenIds(record.run),
    startedAt: new Date(record.startedAtMs).toISOString(),
    userId,
    accountId: accountOf(ctx, record, userId),
  };
}

function recordOrThrow(ctx: AppContext): PlayRecord {
  const record = readRecord(ctx);
  if (!record) {
    throw errors.notFound(
      'No scenario is being played in this sandbox: create a session with one (POST /_emulator/sessions { "scenario": "demo" }) and play it there',
    );
  }
  return record;
}

export function getPlayState(ctx: AppContext): PlayState {
  return stateOf(ctx, recordOrThrow(ctx));
}

/** The play's state if this sandbox plays one. */
export function findPlayState(ctx: AppContext): PlayState | null {
  const record = readRecord(ctx);
  return record ? stateOf(ctx, record) : null;
}

/**
 * Play step `number` (1-based): only the next one, one at a time (409 otherwise). Its file steps run in order; the
 * first failed check ends the step and the play, as it ends a run of the CLI (docs/sessions.md#playing-a-scenario).
 */
export async function playStep(ctx: AppContext, transport: ScenarioTransport, number: number): Promise<PlayStepResult> {
  const record = recordOrThrow(ctx);
  const groups = playGroups(record.loaded);
  const name = record.loaded.scenario.name;
  if (number > groups.length) throw errors.notFound(`The scenario ${name} has ${groups.length} steps; there is no step ${number}`);
  const slot = ctx.runtime.get(scenarioPlaySlot);
  if (slot.runningStep !== null) throw errors.conflict(`Step ${slot.runningStep} of the scenario ${name} is running; wait for it to finish`);
  if (record.failed) {
    throw errors.conflict(`The scenario ${name} stopped at step ${record.failed.step}, whose check failed; reset the sandbox (POST /_emulator/reset) or start a new session to play it again`);
  }
  if (record.completed >= groups.length) {
    throw errors.conflict(`The scenario ${name} has finished (all ${groups.length} steps ran); reset the sandbox (POST /_emulator/reset) or start a new session to play it again`);
  }
  if (number !== record.completed + 1) {
    throw errors.conflict(
      number <= record.completed
        ? `Step ${number} of the scenario ${name} has run already; the next step is ${record.completed + 1}`
        : `Step ${number} cannot run before step ${record.completed + 1}; a scenario plays its steps in order`,
    );
  }
  slot.runningStep = number;
  const before = stateReplacements(ctx);
  const results: StepResult[] = [];
  let run = record.run;
  // the played step's engine steps run in one request: their matches share one time budget (docs/scenarios.md#matchers)
  const regex = new RegexRunner();
  try {
    for (const index of groups[number - 1]!) {
      const outcome = await runStep(transport, record.loaded, run, index, regex);
      run = outcome.state;
      results.push(outcome.result);
      if (!outcome.result.passed) break;
    }
  } catch (error) {
    // a call that got no answer (a dropped connection): nothing is recorded, the step may be sent again
    if (error instanceof ServiceError) throw error;
    throw errors.conflict(`Step ${number} of the scenario ${name} could not run: ${(error as Error).message}; the play stays at step ${number}`);
  } finally {
    slot.runningStep = null;
  }
  // docs/control-plane.md#a-write-after-a-wait: recorded once no save, restore or reset is under way; one that replaced
  // the state while the step ran left a state this step's progress is not of
  return writeAfterWait(ctx, `step ${number} of the scenario ${name} ran`, () => {
    if (stateReplacements(ctx) !== before) {
      throw errors.conflict(
        `The sandbox was reset or restored while step ${number} of the scenario ${name} ran, so the step is not recorded; play from the state it is in now (GET /_emulator/scenario)`,
      );
    }
    return recordStep(ctx, record, number, run, results);
  });
}

/** The played step's results kept in the sandbox's record, and the answer. */
function recordStep(ctx: AppContext, record: PlayRecord, number: number, run: RunState, results: StepResult[]): PlayStepResult {
  const transactionId = [...results].reverse().find((result) => result.transactionId)?.transactionId ?? null;
  const failedResult = results.find((result) => !result.passed);
  const next: PlayRecord = {
    ...record,
    run,
    completed: number,
    done: [...record.done.slice(0, number - 1), { results: results.map(engineView), transactionId, summary: summaryOf(results) }],
    failed: failedResult
      ? { step: number, message: failedResult.failure?.message ?? 'a check failed', line: failedResult.failure?.line ?? null, column: failedResult.failure?.column ?? null }
      : null,
    accountId: (transactionId ? transactionAccount(ctx, transactionId) : null) ?? record.accountId,
  };
  writeRecord(ctx, next);
  const state = stateOf(ctx, next);
  return { step: state.steps[number - 1]!, scenario: state };
}
