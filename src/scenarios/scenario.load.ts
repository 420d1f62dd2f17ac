import { createRequire } from 'node:module';
import type * as YamlModule from 'yaml';
import type { Document, LineCounter, Node as YamlNode, Pair } from 'yaml';
import type { z } from 'zod';
import { ACTIONS, MATCHERS, NAME_PATTERN, scenarioSchema, type ActionName, type Scenario, type ScenarioStep } from './scenario.schema.js';
import { parseReference, referencesIn } from './scenario.refs.js';
import { MATCHES_PER_STEP } from './scenario.match.js';

// Reading a scenario file (docs/decisions.md#scenario-errors): YAML or JSON (JSON is YAML; one parser keeps the line and
// column of every node), bounded before it is parsed, validated by the zod schema with each problem mapped back to
// the node it is about, then its references and names checked. Everything here runs before any request is sent;
// a bad file is a ScenarioFileError (exit code 2 on the CLI, 400 over HTTP), never a stack trace.

// The `yaml` package is loaded on first use through Node's own require: the server's bundle keeps it out of start-up
// (scripts/bundle.mjs replaces a bundled `import 'yaml'` with a stand-in that loads the real package on first use), and a
// server that never reads a scenario never parses it.
let yamlModule: typeof YamlModule | null = null;
function yaml(): typeof YamlModule {
  yamlModule ??= createRequire(import.meta.url)('yaml') as typeof YamlModule;
  return yamlModule;
}

/** docs/decisions.md#scenario-limits */
export const SCENARIO_LIMITS = {
  bytes: 1024 * 1024,
  steps: 500,
  depth: 64,
  aliases: 100,
  /** Nodes after aliases are expanded: a bound on the work of every walk over the file. */
  nodes: 200_000,
  /** Problems reported at most (the first is the error's own message). */
  problems: 20,
} as const;

export interface ScenarioProblem {
  line: number;
  column: number;
  message: string;
  /** The JSON path of the node, `$.steps[2].request.path`. */
  path: string;
}

export class ScenarioFileError extends Error {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly path: string;
  readonly problems: readonly ScenarioProblem[];

  constructor(file: string, problems: readonly ScenarioProblem[]) {
    const first = problems[0] ?? { line: 1, column: 1, message: 'the file is not a scenario', path: '$' };
    super(first.message);
    this.name = 'ScenarioFileError';
    this.file = file;
    this.line = first.line;
    this.column = first.column;
    this.path = first.path;
    this.problems = problems.length > 0 ? problems : [first];
  }

  /** One line per problem: `FILE:LINE:COLUMN: message`. */
  lines(): string[] {
    return this.problems.map((problem) => `${this.file}:${problem.line}:${problem.column}: ${problem.message}`);
  }
}

export interface Position {
  line: number;
  column: number;
}

export interface StepPositions {
  /** The step itself (its first field). */
  step: Position;
  /** The action's field, or the step's own position when it has none. */
  action: Position;
  expect: Position | null;
  /** A request's `as` field, when it has one. */
  as: Position | null;
  /** Each `expect.body` / `expect.headers` key, by its dotted path. */
  expectFields: Record<string, Position>;
}

/** A file read and checked: plain JSON, so a server can keep it (or re-read it) between requests. */
export interface LoadedScenario {
  file: string;
  scenario: Scenario;
  steps: Array<StepPositions & { action: Position; actionName: ActionName | null }>;
  /** Every name a `given` makes, with what it is. */
  givenNames: Record<string, 'user' | 'account' | 'beneficiary' | 'depositInstruction'>;
  /** Where each given user is written (a failure building it points there). */
  givenUsers: Position[];
  /** Where `webhooks` is written, when it is (a runner without a receiver points there). */
  webhooks: Position | null;
}

type PathKey = string | number;

function pathText(path: readonly PathKey[]): string {
  let text = '$';
  for (const key of path) text += typeof key === 'number' ? `[${key}]` : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  return text;
}

/** Line and column (1-based) of an offset, counted in the text itself (used before a document exists). */
function positionOfOffset(text: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  for (let index = 0; index < offset && index < text.length; index++) {
    if (text.charCodeAt(index) === 10) {
      line++;
      lineStart = index + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

// The lexer's control tokens take no room in the text (yaml's CST: document, flow error end, scalar marks).
const CONTROL_TOKENS = new Set(['\x02', '\x18', '\x1f']);

/**
 * The flow nesting of the text, measured on the YAML lexer's tokens before anything is parsed: the parser and
 * composer recurse per level and a file of 100,000 `[` would exhaust the process (docs/decisions.md#scenario-limits). The
 * lexer is a generator, so it stops at the first level too deep. Block nesting needs indentation, at least one
 * more column per level, so 1 MiB holds at most ~1,400 levels, which the parser takes; it is checked on the tree.
 */
function flowTooDeep(text: string): number | null {
  let depth = 0;
  let offset = 0;
  for (const token of new (yaml().Lexer)().lex(text)) {
    if (token === '[' || token === '{') {
      if (++depth > SCENARIO_LIMITS.depth) return offset;
    } else if (token === ']' || token === '}') {
      depth = Math.max(0, depth - 1);
    }
    if (!CONTROL_TOKENS.has(token)) offset += token.length;
  }
  return null;
}

const CORE_TAGS = new Set([
  'tag:yaml.org,2002:str',
  'tag:yaml.org,2002:int',
  'tag:yaml.org,2002:float',
  'tag:yaml.org,2002:bool',
  'tag:yaml.org,2002:null',
  'tag:yaml.org,2002:map',
  'tag:yaml.org,2002:seq',
]);

interface Located {
  node: YamlNode | null;
  key: YamlNode | null;
}

/** The node at a JSON path, or the deepest one found on the way (a missing field: the object that lacks it). */
function locate(doc: Document, path: readonly PathKey[]): Located {
  let node: unknown = doc.contents;
  let key: YamlNode | null = null;
  for (const segment of path) {
    if (yaml().isAlias(node)) break;
    if (yaml().isMap(node)) {
      const pair = (node.items as Array<Pair<unknown, unknown>>).find((item) => yaml().isScalar(item.key) && String(item.key.value) === String(segment));
      if (!pair) break;
      key = pair.key as YamlNode;
      node = pair.value ?? pair.key;
    } else if (yaml().isSeq(node) && typeof segment === 'number' && node.items[segment] !== undefined) {
      key = null;
      node = node.items[segment];
    } else {
      break;
    }
  }
  return { node: (node as YamlNode | null) ?? null, key };
}

function rangeStart(node: YamlNode | null): number {
  return node?.range?.[0] ?? 0;
}

class ProblemList {
  readonly items: ScenarioProblem[] = [];
  constructor(
    private readonly doc: Document | null,
    private readonly lines: LineCounter | null,
  ) {}

  at(path: readonly PathKey[], message: string, where: 'value' | 'key' = 'value'): void {
    if (this.items.length >= SCENARIO_LIMITS.problems) return;
    let position: Position = { line: 1, column: 1 };
    if (this.doc && this.lines) {
      const found = locate(this.doc, path);
      const node = where === 'key' && found.key ? found.key : found.node;
      const { line, col } = this.lines.linePos(rangeStart(node));
      position = { line, column: col };
    }
    this.items.push({ ...position, message, path: pathText(path) });
  }

  atPosition(position: Position, path: readonly PathKey[], message: string): void {
    if (this.items.length < SCENARIO_LIMITS.problems) this.items.push({ ...position, message, path: pathText(path) });
  }

  position(path: readonly PathKey[], where: 'value' | 'key' = 'value'): Position {
    if (!this.doc || !this.lines) return { line: 1, column: 1 };
    const found = locate(this.doc, path);
    const { line, col } = this.lines.linePos(rangeStart(where === 'key' && found.key ? found.key : found.node));
    return { line, column: col };
  }
}

// ---- zod issues -> problems ----

type Issue = z.core.$ZodIssue;

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return typeof value;
}

function expectedText(expected: string): string {
  switch (expected) {
    case 'object':
    case 'record':
      return 'an object';
    case 'array':
      return 'a list';
    case 'string':
      return 'a string';
    case 'number':
    case 'int':
      return 'a number';
    case 'boolean':
      return 'true or false';
    default:
      return expected;
  }
}

function valueAt(root: unknown, path: readonly PathKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key as string];
  }
  return current;
}

/** The fields an object of the schema accepts at a path (for "unknown field" messages), empty when unknown. */
function allowedFields(path: readonly PathKey[]): string[] {
  let candidates: unknown[] = [scenarioSchema];
  const unwrap = (schema: unknown): unknown[] => {
    const def = (schema as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
    if (!def) return [];
    if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default') return unwrap(def.innerType);
    if (def.type === 'union') return (def.options as unknown[]).flatMap(unwrap);
    if (def.type === 'pipe') return unwrap(def.in);
    return [schema];
  };
  candidates = candidates.flatMap(unwrap);
  for (const key of path) {
    const next: unknown[] = [];
    for (const schema of candidates) {
      const def = (schema as { _zod: { def: Record<string, unknown> } })._zod.def;
      if (def.type === 'object' && typeof key === 'string') {
        const shape = def.shape as Record<string, unknown>;
        if (shape[key]) next.push(...unwrap(shape[key]));
      } else if (def.type === 'array' && typeof key === 'number') {
        next.push(...unwrap(def.element));
      } else if (def.type === 'record') {
        next.push(...unwrap(def.valueType));
      }
    }
    candidates = next;
  }
  const fields = new Set<string>();
  for (const schema of candidates) {
    const def = (schema as { _zod: { def: Record<string, unknown> } })._zod.def;
    if (def.type === 'object') for (const field of Object.keys(def.shape as object)) fields.add(field);
  }
  return [...fields].filter((field) => field !== '$schema');
}

function addIssues(problems: ProblemList, root: unknown, issues: readonly Issue[], prefix: readonly PathKey[]): void {
  for (const issue of issues) {
    const path = [...prefix, ...(issue.path as PathKey[])];
    switch (issue.code) {
      case 'unrecognized_keys': {
        const allowed = allowedFields(path);
        for (const key of issue.keys) {
          const hint = allowed.length > 0 ? ` (allowed here: ${allowed.join(', ')})` : '';
          problems.at([...path, key], `unknown field "${key}"${hint}`, 'key');
        }
        break;
      }
      case 'invalid_union': {
        // The branch whose type matched (its problems are deeper than the union itself) says what is wrong; when no
        // branch's type matched, say which types are accepted.
        const matched = issue.errors.find((branch) => branch.every((inner) => !(inner.code === 'invalid_type' && inner.path.length === 0)));
        if (matched) {
          addIssues(problems, root, matched, path);
        } else {
          const expected = [...new Set(issue.errors.flatMap((branch) => branch.filter((inner) => inner.code === 'invalid_type').map((inner) => expectedText((inner as { expected: string }).expected))))];
          const value = valueAt(root, path);
          problems.at(path, `${lastName(path)} must be ${expected.join(' or ') || 'another value'} (found ${describeType(value)})`);
        }
        break;
      }
      case 'invalid_type': {
        const value = valueAt(root, path);
        if (value === undefined) problems.at(path, `${lastName(path)} is required`);
        else problems.at(path, `${lastName(path)} must be ${expectedText(issue.expected)} (found ${describeType(value)})`);
        break;
      }
      case 'invalid_value':
        problems.at(path, `${lastName(path)} must be ${issue.values.map((value) => JSON.stringify(value)).join(' or ')} (found ${JSON.stringify(valueAt(root, path)) ?? 'nothing'})`);
        break;
      case 'too_big':
        problems.at(path, `${lastName(path)} ${issue.origin === 'array' ? `holds at most ${String(issue.maximum)} items` : issue.origin === 'string' ? `is at most ${String(issue.maximum)} characters` : `is at most ${String(issue.maximum)}`}`);
        break;
      case 'too_small':
        problems.at(path, `${lastName(path)} ${issue.origin === 'array' ? `holds at least ${String(issue.minimum)} item${issue.minimum === 1 ? '' : 's'}` : issue.origin === 'string' ? `is at least ${String(issue.minimum)} character${issue.minimum === 1 ? '' : 's'}` : `is at least ${String(issue.minimum)}`}`);
        break;
      default:
        // custom messages (regex, refine) already say what the field must be
        problems.at(path, issue.message.startsWith('Invalid') ? `${lastName(path)}: ${issue.message}` : issue.message);
    }
  }
}

function lastName(path: readonly PathKey[]): string {
  for (let index = path.length - 1; index >= 0; index--) if (typeof path[index] === 'string') return String(path[index]);
  return 'the file';
}

// ---- the tree: tags, nesting, size ----

/** Refuses custom tags and measures nesting and size, without recursion (docs/decisions.md#scenario-limits). */
function checkTree(doc: Document, problems: ProblemList): void {
  const stack: Array<{ node: unknown; depth: number; path: PathKey[] }> = [{ node: doc.contents, depth: 1, path: [] }];
  let seen = 0;
  while (stack.length > 0) {
    const { node, depth, path } = stack.pop()!;
    if (++seen > SCENARIO_LIMITS.nodes) {
      problems.at([], `the file holds more than ${SCENARIO_LIMITS.nodes} values`);
      return;
    }
    const tag = (node as { tag?: string } | null)?.tag;
    if (tag !== undefined && !CORE_TAGS.has(tag)) {
      problems.at(path, `the tag ${tag} is not allowed: a scenario holds plain YAML values (strings, numbers, booleans, null, lists and objects)`);
      return;
    }
    if (yaml().isMap(node) || yaml().isSeq(node)) {
      if (depth > SCENARIO_LIMITS.depth) {
        problems.at(path, `the file nests more than ${SCENARIO_LIMITS.depth} levels deep`);
        return;
      }
      if (yaml().isMap(node)) {
        for (const pair of node.items as Array<Pair<unknown, unknown>>) {
          if (!yaml().isScalar(pair.key)) {
            problems.at(path, 'a key must be a plain string, not a list or an object');
            return;
          }
          stack.push({ node: pair.value, depth: depth + 1, path: [...path, String(pair.key.value)] });
        }
      } else {
        node.items.forEach((item, index) => stack.push({ node: item, depth: depth + 1, path: [...path, index] }));
      }
    }
  }
}

// ---- references and names ----

interface Scope {
  names: Set<string>;
  steps: Set<string>;
}

function checkStrings(value: unknown, path: PathKey[], scope: Scope, problems: ProblemList): void {
  const stack: Array<{ value: unknown; path: PathKey[] }> = [{ value, path }];
  while (stack.length > 0) {
    const { value: current, path: at } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.split('${').length - 1 > referencesIn(current).length) problems.at(at, 'a ${ without its closing }: write ${name} or ${name.dotted.path}');
      for (const { expression, parsed } of referencesIn(current)) {
        const problem = referenceProblem(expression, parsed, scope);
        if (problem) problems.at(at, problem);
      }
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => stack.push({ value: item, path: [...at, index] }));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        for (const { expression, parsed } of referencesIn(key)) {
          const problem = referenceProblem(expression, parsed, scope);
          if (problem) problems.at([...at, key], problem, 'key');
        }
        stack.push({ value: item, path: [...at, key] });
      }
    }
  }
}

function referenceProblem(expression: string, parsed: ReturnType<typeof parseReference>, scope: Scope): string | null {
  if (!parsed) return `\${${expression}} is not a reference: write \${name} or \${name.dotted.path}`;
  if (parsed.root === 'steps') {
    const id = parsed.path[0];
    if (!id) return `\${${expression}} names no step: write \${steps.<id>.status}, \${steps.<id>.body...} or \${steps.<id>.headers...}`;
    if (!scope.steps.has(id)) return `\${${expression}}: no earlier step has the id "${id}"`;
    const part = parsed.path[1];
    if (part !== undefined && part !== 'status' && part !== 'body' && part !== 'headers' && part !== 'transactionId') return `\${${expression}}: a step's answer has status, body, headers and transactionId, not "${part}"`;
    return null;
  }
  if (!scope.names.has(parsed.root)) {
    const known = [...scope.names].sort();
    return `\${${expression}}: "${parsed.root}" is not a given name or an earlier capture${known.length > 0 ? ` (known here: ${known.slice(0, 20).join(', ')})` : ' (none is known here)'}`;
  }
  return null;
}

function checkGiven(scenario: Scenario, problems: ProblemList): LoadedScenario['givenNames'] {
  const names: LoadedScenario['givenNames'] = {};
  const scope: Scope = { names: new Set(), steps: new Set() };
  const claim = (name: string, kind: LoadedScenario['givenNames'][string], path: PathKey[]) => {
    if (names[name] !== undefined) problems.at(path, `the name "${name}" is given twice; every given name and capture must be unique`);
    names[name] = kind;
    scope.names.add(name);
  };
  (scenario.given?.users ?? []).forEach((user, u) => {
    const base: PathKey[] = ['given', 'users', u];
    claim(user.as, 'user', [...base, 'as']);
    const enrollment = user.enrollment ?? 'ACTIVE';
    if (enrollment !== 'ACTIVE' && (user.accounts?.length || user.depositInstructions?.length)) {
      problems.at([...base, user.accounts?.length ? 'accounts' : 'depositInstructions'], `accounts and deposit instructions need enrollment ACTIVE (this user's is ${enrollment}): accounts open when the enrollment is approved`);
    }
    const accounts = new Set<string>();
    (user.accounts ?? []).forEach((account, a) => {
      claim(account.as, 'account', [...base, 'accounts', a, 'as']);
      accounts.add(account.as);
    });
    (user.depositInstructions ?? []).forEach((instruction, d) => {
      claim(instruction.as, 'depositInstruction', [...base, 'depositInstructions', d, 'as']);
      if (!accounts.has(instruction.account)) {
        problems.at([...base, 'depositInstructions', d, 'account'], `account "${instruction.account}" is not one of ${user.as}'s accounts${accounts.size > 0 ? ` (${[...accounts].join(', ')})` : ' (it has none named)'}`);
      }
    });
    (user.beneficiaries ?? []).forEach((beneficiary, b) => {
      checkStrings(beneficiary.body, [...base, 'beneficiaries', b, 'body'], scope, problems);
      claim(beneficiary.as, 'beneficiary', [...base, 'beneficiaries', b, 'as']);
    });
  });
  return names;
}

function actionsOf(step: ScenarioStep): ActionName[] {
  return ACTIONS.filter((action) => step[action] !== undefined);
}

const MATCHER_SET = new Set<string>(MATCHERS);

/** A value in `expect` that is an object with one matcher key is a matcher; a matcher key beside others is a mistake. */
function checkExpectValue(value: unknown, path: PathKey[], problems: ProblemList): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const keys = Object.keys(value);
  const matcherKeys = keys.filter((key) => MATCHER_SET.has(key));
  if (matcherKeys.length === 0) return;
  if (keys.length > 1) {
    problems.at(path, `a matcher is an object with exactly one of ${MATCHERS.join(', ')}; this one has ${keys.join(', ')} (to compare with such an object, write { equals: {...} })`);
    return;
  }
  const name = matcherKeys[0]!;
  const argument = (value as Record<string, unknown>)[name];
  if (name === 'matches') {
    if (typeof argument !== 'string' || argument.length > 1024) {
      problems.at([...path, name], 'matches takes a regular expression as a string of at most 1024 characters');
      return;
    }
    try {
      new RegExp(argument, 'u');
    } catch (error) {
      problems.at([...path, name], `matches: not a regular expression: ${(error as Error).message}`);
    }
  } else if (name === 'exists') {
    if (typeof argument !== 'boolean') problems.at([...path, name], 'exists takes true or false');
  } else if (name === 'gt' || name === 'gte' || name === 'lt' || name === 'lte') {
    if (typeof argument !== 'number' && !(typeof argument === 'string' && (/^-?\d{1,30}(\.\d{1,18})?$/.test(argument) || /^\$\{[^{}]*\}$/.test(argument)))) {
      problems.at([...path, name], `${name} takes a number or a decimal string such as "10.50"`);
    }
  }
}

/** docs/scenarios.md#matchers: a step's `matches` share one time budget, and a step holds at most MATCHES_PER_STEP of them. */
function checkMatchesCount(expect: NonNullable<ScenarioStep['expect']>, path: PathKey[], problems: ProblemList): void {
  const candidates: Array<[PathKey[], unknown]> = [
    ...Object.entries(expect.body ?? {}).map(([field, value]): [PathKey[], unknown] => [[...path, 'body', field], value]),
    ...Object.entries(expect.headers ?? {}).map(([field, value]): [PathKey[], unknown] => [[...path, 'headers', field], value]),
    [[...path, 'text'], expect.text],
    [[...path, 'balance', 'available'], expect.balance?.available],
    [[...path, 'balance', 'current'], expect.balance?.current],
  ];
  const withMatches = candidates.filter(([, value]) => value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, 'matches'));
  if (withMatches.length > MATCHES_PER_STEP) {
    problems.at(withMatches[MATCHES_PER_STEP]![0], `a step holds at most ${MATCHES_PER_STEP} matches checks (this one has ${withMatches.length}): spread them over steps`, 'key');
  }
}

function checkSteps(scenario: Scenario, givenNames: LoadedScenario['givenNames'], problems: ProblemList): LoadedScenario['steps'] {
  const scope: Scope = { names: new Set(Object.keys(givenNames)), steps: new Set() };
  const users = new Set(Object.entries(givenNames).filter(([, kind]) => kind === 'user').map(([name]) => name));
  const accounts = new Set(Object.entries(givenNames).filter(([, kind]) => kind === 'account').map(([name]) => name));
  const ids = new Set<string>();
  const positions: LoadedScenario['steps'] = [];
  scenario.steps.forEach((step, index) => {
    const base: PathKey[] = ['steps', index];
    // in the order the file writes them, so the message points at the second one written
    const actions = actionsOf(step)
      .map((action) => ({ action, at: problems.position([...base, action], 'key') }))
      .sort((a, b) => a.at.line - b.at.line || a.at.column - b.at.column)
      .map(({ action }) => action);
    if (actions.length > 1) {
      problems.at([...base, actions[1]!], `a step takes one action; this one has ${actions.join(' and ')} (split it into ${actions.length} steps)`, 'key');
    } else if (actions.length === 0 && step.expect === undefined) {
      problems.at(base, `a step takes one action (${ACTIONS.join(', ')}) or an expect`);
    }
    const actionName = actions[0] ?? null;
    // the action sees the names made before this step; capture and expect see this step's too
    if (actionName) checkStrings(step[actionName], [...base, actionName], scope, problems);
    const request = step.request;
    if (request) {
      const bodies = (['body', 'raw', 'base64'] as const).filter((field) => request[field] !== undefined);
      if (bodies.length > 1) problems.at([...base, 'request', bodies[1]!], `a request has one body: body, raw or base64 (this one has ${bodies.join(' and ')})`, 'key');
      if ((request.method === 'GET' || request.method === 'DELETE') && bodies.length > 0) problems.at([...base, 'request', bodies[0]!], `a ${request.method} request carries no body`, 'key');
      const as = request.as;
      if (typeof as === 'string' && as !== 'programme' && !users.has(as)) {
        problems.at([...base, 'request', 'as'], `as: "${as}" is not a given user${users.size > 0 ? ` (${[...users].join(', ')})` : ''}; write programme, a given user's name, or { key, user }`);
      }
      if (as && typeof as === 'object' && as.user !== undefined && !as.user.includes('${') && !users.has(as.user) && !/^usr_[A-Za-z0-9_]+$/.test(as.user)) {
        problems.at([...base, 'request', 'as', 'user'], `user "${as.user}" is not a given user; write a given user's name, a user id (usr_...) or a \${...} reference to one`);
      }
    }
    if (step.id !== undefined) {
      if (ids.has(step.id)) problems.at([...base, 'id'], `the step id "${step.id}" is used twice`);
      ids.add(step.id);
      scope.steps.add(step.id);
    }
    for (const name of Object.keys(step.capture ?? {})) {
      if (scope.names.has(name)) problems.at([...base, 'capture', name], `the name "${name}" is taken already (a given name or an earlier capture); pick another`, 'key');
      scope.names.add(name);
    }
    const expectFields: Record<string, Position> = {};
    if (step.expect) {
      checkStrings(step.expect, [...base, 'expect'], scope, problems);
      for (const part of ['body', 'headers'] as const) {
        for (const [field, value] of Object.entries(step.expect[part] ?? {})) {
          checkExpectValue(value, [...base, 'expect', part, field], problems);
          expectFields[`${part}.${field}`] = problems.position([...base, 'expect', part, field], 'key');
        }
      }
      const balance = step.expect.balance;
      if (balance) {
        if (!balance.account.includes('${') && !accounts.has(balance.account)) {
          problems.at([...base, 'expect', 'balance', 'account'], `account "${balance.account}" is not a given account${accounts.size > 0 ? ` (${[...accounts].join(', ')})` : ''}; write a given account's name or a \${...} reference`);
        }
        checkExpectValue(balance.available, [...base, 'expect', 'balance', 'available'], problems);
        checkExpectValue(balance.current, [...base, 'expect', 'balance', 'current'], problems);
        for (const field of ['available', 'current'] as const) if (balance[field] !== undefined) expectFields[`balance.${field}`] = problems.position([...base, 'expect', 'balance', field], 'key');
      }
      if (step.expect.text !== undefined) {
        checkExpectValue(step.expect.text, [...base, 'expect', 'text'], problems);
        expectFields.text = problems.position([...base, 'expect', 'text'], 'key');
      }
      checkMatchesCount(step.expect, [...base, 'expect'], problems);
      if (step.expect.webhooks) expectFields.webhooks = problems.position([...base, 'expect', 'webhooks'], 'key');
      if (step.expect.status !== undefined) expectFields.status = problems.position([...base, 'expect', 'status'], 'key');
    }
    positions.push({
      step: problems.position(base),
      action: actionName ? problems.position([...base, actionName], 'key') : problems.position(base),
      actionName,
      expect: step.expect ? problems.position([...base, 'expect'], 'key') : null,
      as: step.request?.as !== undefined ? problems.position([...base, 'request', 'as']) : null,
      expectFields,
    });
  });
  return positions;
}

/** Whether the text is a JSON document rather than YAML (for messages only: one parser reads both). */
function looksLikeJson(text: string): boolean {
  return /^\s*[{[]/.test(text);
}

/**
 * Read a scenario file's text (YAML or JSON) and check it whole: the bounds, the YAML, the schema, the names and
 * references (docs/decisions.md#scenario-errors). `file` names it in messages. Throws ScenarioFileError.
 */
export function loadScenario(text: string, file: string): LoadedScenario {
  const fail = (problems: ScenarioProblem[]): never => {
    throw new ScenarioFileError(file, problems);
  };
  if (typeof text !== 'string') fail([{ line: 1, column: 1, message: 'the scenario must be text (YAML or JSON)', path: '$' }]);
  if (Buffer.byteLength(text, 'utf8') > SCENARIO_LIMITS.bytes) {
    fail([{ line: 1, column: 1, message: `the file is larger than ${SCENARIO_LIMITS.bytes} bytes (1 MiB), the most a scenario may be`, path: '$' }]);
  }
  const tooDeepAt = flowTooDeep(text);
  if (tooDeepAt !== null) fail([{ ...positionOfOffset(text, tooDeepAt), message: `the file nests more than ${SCENARIO_LIMITS.depth} levels deep`, path: '$' }]);

  const lines = new (yaml().LineCounter)();
  const doc = yaml().parseDocument(text, {
    lineCounter: lines,
    prettyErrors: false,
    uniqueKeys: true,
    strict: true,
    schema: 'core',
    merge: false,
    customTags: [],
    keepSourceTokens: false,
  });
  // the first syntax error only: the parser's later ones follow from it
  const syntax = [...doc.errors, ...doc.warnings].slice(0, 1).map((error) => {
    const { line, col } = lines.linePos(error.pos[0]);
    const message = error.code === 'TAG_RESOLVE_FAILED' ? `${error.message}: a scenario holds plain values, no custom tags` : error.message;
    return { line, column: col, message: `${looksLikeJson(text) ? 'JSON' : 'YAML'}: ${message.replace(/\s+/g, ' ').trim()}`, path: '$' };
  });
  if (syntax.length > 0) fail(syntax);

  const problems = new ProblemList(doc, lines);
  checkTree(doc, problems);
  if (problems.items.length > 0) fail(problems.items);

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: SCENARIO_LIMITS.aliases });
  } catch (error) {
    fail([{ line: 1, column: 1, message: `the file's aliases expand too far (at most ${SCENARIO_LIMITS.aliases} uses of an anchor's content): ${(error as Error).message}`, path: '$' }]);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    fail([{ line: 1, column: 1, message: `a scenario is an object with name and steps (found ${describeType(value)})`, path: '$' }]);
  }
  const parsed = scenarioSchema.safeParse(value);
  if (!parsed.success) {
    addIssues(problems, value, parsed.error.issues, []);
    fail(sortProblems(problems.items));
  }
  const scenario = parsed.data!;
  const givenNames = checkGiven(scenario, problems);
  const steps = checkSteps(scenario, givenNames, problems);
  if (problems.items.length > 0) fail(sortProblems(problems.items));
  const givenUsers = (scenario.given?.users ?? []).map((_user, index) => problems.position(['given', 'users', index]));
  const webhooks = scenario.webhooks === undefined ? null : problems.position(['webhooks']);
  return { file, scenario, steps, givenNames, givenUsers, webhooks };
}

function sortProblems(problems: ScenarioProblem[]): ScenarioProblem[] {
  return [...problems].sort((a, b) => a.line - b.line || a.column - b.column);
}

export { NAME_PATTERN };
