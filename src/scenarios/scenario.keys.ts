import { SCOPES, type Scope } from '../http/scopes.js';
import { ScenarioFileError, type LoadedScenario, type ScenarioProblem } from './scenario.load.js';
import { REFERENCE } from './scenario.refs.js';
import { v1RouteOf } from './scenario.scopes.js';

// The keys a scenario signs with (docs/decisions.md#scenario-keys). The engine signs every /v1 request itself, as a client
// does, with keys it learns from the sandbox: the file's own fixtures (inline or a path), the server's fixtures when
// it runs in process, or a session's `credentials` (the first programme's MULTI_USER and SINGLE_USER keys). When the
// keys' entitlements are known, a step whose key may not call its route is a file error, found before any request
// is sent (`checkKeys`); a session's credentials do not list entitlements, so with those only the keys' existence is
// checked, after the session is created and before the first step, and the server's 403 says the rest.

export interface ScenarioKey {
  apiKey: string;
  secret: string;
  programmeId: string;
  integrationType: 'SINGLE_USER' | 'MULTI_USER';
  userId: string | null;
  /** The scopes the key may use; null: not known here (the server checks them). */
  entitlements: readonly Scope[] | null;
}

/** The keys a run may sign with; `programmeId` is the first programme, where `given` makes its users. */
export interface KeyBook {
  programmeId: string;
  keys: ScenarioKey[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The keys of a fixtures object, read loosely (the server validates the fixtures themselves); null when it has none. */
export function keyBookFromFixtures(fixtures: unknown): KeyBook | null {
  if (!isRecord(fixtures) || !Array.isArray(fixtures.programmes)) return null;
  const keys: ScenarioKey[] = [];
  let first: string | null = null;
  for (const programme of fixtures.programmes) {
    if (!isRecord(programme) || typeof programme.id !== 'string') continue;
    first ??= programme.id;
    for (const key of Array.isArray(programme.apiKeys) ? programme.apiKeys : []) {
      if (!isRecord(key) || typeof key.apiKey !== 'string' || typeof key.secret !== 'string') continue;
      keys.push({
        apiKey: key.apiKey,
        secret: key.secret,
        programmeId: programme.id,
        integrationType: key.integrationType === 'SINGLE_USER' ? 'SINGLE_USER' : 'MULTI_USER',
        userId: typeof key.userId === 'string' ? key.userId : null,
        // docs/authentication.md#entitlements: omitted, every scope
        entitlements: Array.isArray(key.entitlements) ? (key.entitlements.filter((scope) => (SCOPES as readonly unknown[]).includes(scope)) as Scope[]) : SCOPES,
      });
    }
  }
  return first === null ? null : { programmeId: first, keys };
}

/** The shape of a session's `credentials` (POST /_emulator/sessions, docs/sessions.md). */
export interface SessionCredentials {
  programmeId: string;
  single: { apiKey: string; secret: string; userId: string } | null;
  multi: { apiKey: string; secret: string } | null;
}

export function keyBookFromSession(credentials: SessionCredentials): KeyBook {
  const keys: ScenarioKey[] = [];
  if (credentials.multi) keys.push({ ...credentials.multi, programmeId: credentials.programmeId, integrationType: 'MULTI_USER', userId: null, entitlements: null });
  if (credentials.single) keys.push({ apiKey: credentials.single.apiKey, secret: credentials.single.secret, programmeId: credentials.programmeId, integrationType: 'SINGLE_USER', userId: credentials.single.userId, entitlements: null });
  return { programmeId: credentials.programmeId, keys };
}

/** The first programme's MULTI_USER key: it makes the given users and signs `as: <user>` and `as: programme`. */
export function programmeKey(book: KeyBook): ScenarioKey | null {
  return book.keys.find((key) => key.programmeId === book.programmeId && key.integrationType === 'MULTI_USER') ?? null;
}

/** The key a request step signs with (after the file was checked against the book). */
export function keyOf(book: KeyBook, as: NonNullable<LoadedScenario['scenario']['steps'][number]['request']>['as']): ScenarioKey | null {
  if (as !== undefined && typeof as === 'object' && as.key !== undefined) return book.keys.find((key) => key.apiKey === as.key) ?? null;
  return programmeKey(book);
}

/** Given users are created, onboarded and funded with the programme key: every scope of that flow. */
const GIVEN_SCOPES: readonly Scope[] = ['enrollment:write', 'enrollment:read', 'accounts:read', 'accounts:write', 'transactions:write', 'beneficiaries:write'];

/**
 * Check every request step's key against the book: the key exists, and (when its entitlements are known) it may call
 * the step's route. A step that expects a 403 is left alone: it checks the refusal on purpose.
 */
export function checkKeys(loaded: LoadedScenario, book: KeyBook): void {
  const problems: ScenarioProblem[] = [];
  const multi = programmeKey(book);
  const users = loaded.scenario.given?.users ?? [];
  if (users.length > 0) {
    if (!multi) {
      problems.push({ line: 1, column: 1, path: '$.given.users', message: `given users are made with programme ${book.programmeId}'s MULTI_USER key, and the sandbox's fixtures give it none` });
    } else if (multi.entitlements) {
      const missing = GIVEN_SCOPES.filter((scope) => !multi.entitlements!.includes(scope));
      if (missing.length > 0) problems.push({ line: 1, column: 1, path: '$.given.users', message: `given users are made with ${multi.apiKey}, which lacks ${missing.join(', ')}` });
    }
  }
  loaded.scenario.steps.forEach((step, index) => {
    const request = step.request;
    if (!request) return;
    const position = loaded.steps[index]!.as ?? loaded.steps[index]!.action;
    const path = `$.steps[${index}].request${loaded.steps[index]!.as ? '.as' : ''}`;
    const key = keyOf(book, request.as);
    if (!key) {
      const named = typeof request.as === 'object' ? request.as.key : undefined;
      problems.push({
        ...position,
        path,
        message: named
          ? `the key ${named} is not one the run knows (${book.keys.map((known) => known.apiKey).join(', ') || 'none'}); give the sandbox's fixtures in the file (fixtures:) to sign with another key`
          : `programme ${book.programmeId} has no MULTI_USER key to sign this request with`,
      });
      return;
    }
    const statuses = step.expect?.status === undefined ? [] : Array.isArray(step.expect.status) ? step.expect.status : [step.expect.status];
    if (statuses.includes(403) || key.entitlements === null) return;
    const route = v1RouteOf(request.method, request.path.replace(REFERENCE, 'x'));
    if (route?.scope && !key.entitlements.includes(route.scope)) {
      problems.push({
        ...position,
        path,
        message: `the key ${key.apiKey} may not call ${request.method} ${route.url}: it needs the ${route.scope} entitlement and the key has ${key.entitlements.join(', ') || 'none'} (expect status 403 to check the refusal)`,
      });
    }
  });
  if (problems.length > 0) throw new ScenarioFileError(loaded.file, problems);
}
