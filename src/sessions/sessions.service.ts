import type { z } from 'zod';
import type { AppContext } from '../context.js';
import { listEndpoints } from '../domains/webhooks/webhooks.endpoints.js';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { checkGivenFixturesSize, FixturesError, loadScenarioFixturesFile, validateFixtures } from '../fixtures/fixtures.loader.js';
import { isIsoInstant } from '../config.js';
import { ScenarioFileError, type LoadedScenario } from '../scenarios/scenario.load.js';
import { loadScenarioOffThread } from '../scenarios/scenario.load-off-thread.js';
import { findScenario } from '../emulator/scenario-library.js';
import type { PlaySource } from '../emulator/scenario-play.service.js';
import type { Fixtures } from '../fixtures/fixtures.schema.js';
import { getSnapshot } from '../emulator/snapshots.service.js';
import { errors, type ServiceError } from '../core/errors.js';
import type { createSessionBody, sessionSchema } from './sessions.schema.js';
import { SESSION_PATH, type Session, type SessionOptions, type SessionRegistry } from './sessions.registry.js';

// The control plane's side of sessions (docs/sessions.md): what a request asks for, checked, and what a session
// looks like to a client.

type CreateSessionInput = z.infer<typeof createSessionBody>;
type SessionView = z.infer<typeof sessionSchema>;

/** The scenario a session starts from, read and checked (its `given` is built once the session exists). */
export interface ChosenScenario {
  loaded: LoadedScenario;
  source: PlaySource;
}

const SCENARIO_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** A scenario file's problem as a 400 on `scenario`: each problem at its line and column (or JSON path for an object). */
function scenarioError(error: ScenarioFileError, asObject: boolean): ServiceError {
  const where = (problem: { line: number; column: number; path: string }) => (asObject ? `scenario at ${problem.path}` : `scenario:${problem.line}:${problem.column}`);
  const items = error.problems.map((problem) => ({ type: 'InvalidValue' as const, fieldRef: 'scenario', message: `${where(problem)}: ${problem.message}` }));
  return errors.invalid(`The scenario cannot be used: ${items[0]!.message}`, items);
}

/** `scenario` of the body: a name (shipped or --scenarios), a file's text, or an object (docs/sessions.md#scenarios). */
export async function chooseScenario(root: AppContext, value: string | Record<string, unknown>): Promise<ChosenScenario & { fixturesDir: string | null }> {
  if (typeof value === 'string' && SCENARIO_NAME.test(value)) {
    const found = findScenario(root.config, value);
    return { loaded: found.loaded, source: found.entry.source, fixturesDir: path.dirname(found.filePath) };
  }
  const asObject = typeof value !== 'string';
  try {
    // read on a worker thread: a client's file never holds the event loop (docs/decisions.md#scenario-limits)
    return { loaded: await loadScenarioOffThread(asObject ? JSON.stringify(value) : value, 'scenario'), source: 'given', fixturesDir: null };
  } catch (error) {
    if (error instanceof ScenarioFileError) throw scenarioError(error, asObject);
    throw error;
  }
}

async function scenarioFixtures(chosen: Awaited<ReturnType<typeof chooseScenario>>): Promise<Fixtures | undefined> {
  const fixtures = chosen.loaded.scenario.fixtures;
  if (fixtures === undefined) return undefined;
  try {
    if (typeof fixtures !== 'string') return validateFixtures(fixtures, 'scenario fixtures');
    // docs/sessions.md#scenarios: a file path is the server's to read only for the server's own files
    if (chosen.fixturesDir === null) {
      throw errors.field('InvalidValue', 'scenario', 'a scenario sent with the request cannot name a fixtures file (the server does not read files for a client): give the fixtures inline, or as the body\'s fixtures');
    }
    return await loadScenarioFixturesFile(await fixturesFileOf(chosen.fixturesDir, fixtures), fixtures);
  } catch (error) {
    if (error instanceof FixturesError) throw errors.field('InvalidValue', 'scenario', `the scenario's fixtures: ${error.message}`);
    throw error;
  }
}

/**
 * docs/scenarios.md#fixtures-files: a scenario file's `fixtures:` path, relative to its folder, must stay within the
 * folder that holds that folder (`../fixtures/x.json` beside `scenarios/` works), symbolic links resolved: the server
 * reads it for whoever asks for the session, so a path out of the project (`../../../etc/passwd`) is not read.
 */
async function fixturesFileOf(scenarioDir: string, given: string): Promise<string> {
  let root: string;
  let file: string;
  try {
    root = await realpath(path.dirname(await realpath(scenarioDir)));
    file = await realpath(path.resolve(scenarioDir, given));
  } catch (error) {
    throw new FixturesError(`cannot read fixtures file ${given}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  if (!file.startsWith(root.endsWith(path.sep) ? root : root + path.sep)) {
    throw new FixturesError(`fixtures file ${given} is outside the folder that holds the scenario's folder; a scenario's fixtures file stays within it (docs/scenarios.md#fixtures-files)`);
  }
  return file;
}

function sameClock(a: string, b: string): boolean {
  return a === b || (a !== 'realtime' && b !== 'realtime' && Date.parse(a) === Date.parse(b));
}

function conflict(field: string, ours: string, theirs: string): ServiceError {
  return errors.field('InvalidValue', field, `${field} "${ours}" differs from the scenario's ${field} "${theirs}": give it in one place, or the same value in both`);
}

/** Check the body against the root sandbox (its snapshots) and the fixtures rules; nothing is built on a refusal. */
export async function sessionOptionsOf(root: AppContext, input: CreateSessionInput): Promise<SessionOptions & { scenario?: ChosenScenario }> {
  const given = input ?? {};
  const chosen = given.scenario === undefined ? undefined : await chooseScenario(root, given.scenario);
  const body = { ...given };
  if (chosen) {
    // docs/sessions.md#scenarios: the scenario's seed, clock and fixtures are the body's; both given, they must agree
    const { seed, clock } = chosen.loaded.scenario;
    if (seed !== undefined) {
      if (body.seed !== undefined && body.seed !== seed) throw conflict('seed', body.seed, seed);
      body.seed = seed;
    }
    if (clock !== undefined) {
      if (!(clock === 'realtime' || isIsoInstant(clock))) throw errors.field('InvalidValue', 'scenario', `the scenario's clock "${clock}" is not an instant the clock can hold`);
      if (body.clock !== undefined && !sameClock(body.clock, clock)) throw conflict('clock', body.clock, clock);
      body.clock = clock;
    }
    const fixtures = await scenarioFixtures(chosen);
    if (fixtures !== undefined) {
      if (body.fixtures !== undefined && JSON.stringify(validateOrRaw(body.fixtures)) !== JSON.stringify(fixtures)) {
        throw errors.field('InvalidValue', 'fixtures', 'fixtures differ from the scenario\'s fixtures: give them in one place, or the same in both');
      }
      body.fixtures = fixtures as unknown as Record<string, unknown>;
    }
  }
  const options = optionsOf(root, body);
  return chosen ? { ...options, scenario: { loaded: chosen.loaded, source: chosen.source } } : options;
}

function validateOrRaw(raw: Record<string, unknown>): unknown {
  try {
    return validateFixtures(raw, 'fixtures');
  } catch {
    return raw;
  }
}

function optionsOf(root: AppContext, body: NonNullable<CreateSessionInput>): SessionOptions {
  if (body.snapshot !== undefined && (body.fixtures !== undefined || body.clock !== undefined)) {
    throw errors.field('InvalidValue', 'snapshot', 'snapshot cannot be combined with fixtures or clock: a snapshot holds its own data and clock');
  }
  const options: SessionOptions = {};
  if (body.snapshot !== undefined) options.snapshot = getSnapshot(root, body.snapshot);
  if (body.fixtures !== undefined) {
    try {
      options.fixtures = validateFixtures(body.fixtures, 'fixtures');
      checkGivenFixturesSize(options.fixtures); // docs/sessions.md#given-fixtures: seeded while every sandbox waits
    } catch (error) {
      if (error instanceof FixturesError) throw errors.field('InvalidValue', 'fixtures', error.message);
      throw error;
    }
  }
  if (body.clock !== undefined) options.clock = body.clock;
  if (body.webhookUrl !== undefined) options.webhookUrl = body.webhookUrl;
  if (body.seed !== undefined) options.seed = body.seed;
  if (body.label !== undefined) options.label = body.label;
  return options;
}

/**
 * Create the session: fixtures that pass their schema can still fail while they are seeded (an amount too large at
 * the currency's precision, a birth date after the session's clock): a 400 on fixtures or clock, never a 500
 * (docs/sessions.md#given-fixtures).
 */
export async function openSession(registry: SessionRegistry, options: SessionOptions, answer?: (session: Session) => void): Promise<Session> {
  try {
    return await registry.create(options, answer);
  } catch (error) {
    // a uniqueness the fixtures' own checks do not know of (a counterparty id given twice): the database's word
    if (isConstraintError(error)) throw errors.field('InvalidValue', 'fixtures', `the fixtures cannot be seeded: ${(error as Error).message}`);
    if (!(error instanceof FixturesError)) throw error;
    // the server's own fixtures fail only for a clock the session was given (a birth date after it, for one)
    if (!options.fixtures && options.clock) throw errors.field('InvalidValue', 'clock', `the fixtures cannot be seeded at clock ${options.clock}: ${error.message}`);
    throw errors.field('InvalidValue', 'fixtures', error.message);
  }
}

function isConstraintError(error: unknown): boolean {
  return typeof (error as { code?: unknown })?.code === 'string' && (error as { code: string }).code.startsWith('SQLITE_CONSTRAINT');
}

export function sessionOrThrow(registry: SessionRegistry, id: string): Session {
  const session = registry.get(id);
  if (!session) throw errors.notFound(`No session "${id}": it was ended, it expired, or it never existed`);
  return session;
}

/** `origin` is the scheme and host the client used (the request's Host), so baseUrl works through Docker's port mapping. */
export function sessionView(registry: SessionRegistry, session: Session, origin: string): SessionView {
  const programme = session.fixtures.programmes[0]!;
  const single = programme.apiKeys.find((key) => key.integrationType === 'SINGLE_USER');
  const multi = programme.apiKeys.find((key) => key.integrationType === 'MULTI_USER');
  // where it sends now (its client may have set another URL since); before its database opens, where its creator said
  const webhookUrl = session.opened ? (listEndpoints(session.sandbox.ctx, programme.id).endpoints[0]?.url ?? null) : session.pinnedWebhookUrl;
  return {
    id: session.id,
    baseUrl: `${origin}${SESSION_PATH}${session.id}`,
    createdAt: new Date(session.createdAtMs).toISOString(),
    lastUsedAt: new Date(session.lastUsedAtMs).toISOString(),
    expiresAt: new Date(session.lastUsedAtMs + registry.idleTimeoutMs).toISOString(),
    webhookUrl,
    startedFrom: session.startedFrom,
    label: session.label,
    scenario: session.scenario,
    credentials: {
      programmeId: programme.id,
      single: single ? { apiKey: single.apiKey, secret: single.secret, userId: single.userId ?? '' } : null,
      multi: multi ? { apiKey: multi.apiKey, secret: multi.secret } : null,
      webhook: { apiKey: programme.webhook.apiKey, secret: programme.webhook.secret },
    },
  };
}
