import { accessSync, constants, realpathSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { readUserFile, sizeText, UserFileError } from '../lib/user-file.js';
import { SCENARIO_FIXTURES_FILE_LIMIT } from '../fixtures/fixtures.loader.js';
import { emptyEnvMessage } from '../config.js';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { loadScenario, ScenarioFileError, SCENARIO_LIMITS, type LoadedScenario } from '../scenarios/scenario.load.js';
import { checkKeys, keyBookFromFixtures, keyBookFromSession, type KeyBook, type SessionCredentials } from '../scenarios/scenario.keys.js';
import { runScenario, type ScenarioResult, type StepResult } from '../scenarios/scenario.run.js';
import { httpTransport } from '../scenarios/scenario.transport.js';
import { junitReport, type FileReport } from './run.report.js';
import { terminalText } from '../lib/terminal-text.js';
import { isHttpUrl } from '../lib/http-url.js';

// `service-sandbox run FILE... [--url URL] [--session] [--junit FILE] [--json] [--admin-token TOKEN]` (docs/cli.md#run):
// each scenario file runs in a fresh session of the server at --url, or of a server this command starts in process on
// a free port. Every file is read and checked before anything is sent. Exit 0 when every step passed, 1 at the first
// failed step (the remaining files do not run), 2 for bad arguments or a bad file (docs/decisions.md#scenario-run).

const USAGE = 'service-sandbox run FILE... [--url URL] [--session] [--junit FILE] [--json] [--admin-token TOKEN]';

class UsageError extends Error {}

interface Arguments {
  files: string[];
  url: string | null;
  keepSession: boolean;
  junit: string | null;
  json: boolean;
  adminToken: string | undefined;
}

function parseArguments(argv: string[], env: NodeJS.ProcessEnv): Arguments {
  if (env.ADMIN_TOKEN === '') throw new UsageError(emptyEnvMessage('ADMIN_TOKEN'));
  const args: Arguments = { files: [], url: null, keepSession: false, junit: null, json: false, adminToken: env.ADMIN_TOKEN };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      args.files.push(arg);
      continue;
    }
    const value = () => {
      const next = argv[++i];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`${arg} needs a value`);
      return next;
    };
    if (arg === '--json') args.json = true;
    else if (arg === '--session') args.keepSession = true;
    else if (arg === '--url') args.url = value();
    else if (arg === '--junit') args.junit = value();
    else if (arg === '--admin-token') args.adminToken = value();
    else throw new UsageError(`unknown option ${arg}; usage: ${USAGE}`);
  }
  if (args.files.length === 0) throw new UsageError(`no scenario file given; usage: ${USAGE}`);
  if (args.url !== null && !isHttpUrl(args.url)) throw new UsageError(`--url "${args.url}": accepts an http:// or https:// URL, such as http://127.0.0.1:4010`);
  if (args.keepSession && args.url === null) throw new UsageError('--session keeps each file\'s session on the server at --url; without --url the server this command starts ends with it');
  if (args.junit !== null) args.junit = junitTarget(args.junit, args.files);
  return args;
}

/**
 * docs/cli.md#run: where `--junit FILE` will write, checked before anything runs (exit 2). A report never replaces a
 * scenario file: not one of the FILE arguments (compared by real path), nor a `.yaml`, `.yml` or `.json` file (the
 * shell's expansion of `--junit scenarios/*.yaml` makes the first scenario the report's path). The path must name a
 * regular file or nothing, in an existing directory this process may write to: the report is written beside it and
 * renamed over it, so a failed write leaves the old file as it was.
 */
function junitTarget(junit: string, files: readonly string[]): string {
  const refuse = (why: string): never => {
    throw new UsageError(`--junit ${junit}: ${why}`);
  };
  if (/\.(ya?ml|json)$/i.test(junit)) refuse('a JUnit report is XML; this is the name of a scenario file (did the shell expand --junit scenarios/*.yaml?); give a .xml path');
  let target = path.resolve(junit);
  let stat: Stats | undefined;
  try {
    target = realpathSync(junit);
    stat = statSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') refuse(`cannot use this path (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (stat && !stat.isFile()) refuse(stat.isDirectory() ? 'is a directory; give the path of the report file' : 'is not a regular file; give the path of the report file');
  for (const file of files) {
    let real: string;
    try {
      real = realpathSync(file);
    } catch {
      continue; // a file that cannot be read is reported as such
    }
    if (real === target) refuse(`is the scenario file ${file}; the report would replace it`);
  }
  const dir = path.dirname(target);
  try {
    if (!statSync(dir).isDirectory()) refuse(`its directory ${dir} is not a directory`);
    accessSync(dir, constants.W_OK);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    refuse(code === 'ENOENT' ? `its directory ${dir} does not exist` : `its directory ${dir} is not writable (${code ?? (error as Error).message})`);
  }
  return target;
}

/** The report written beside `target` and renamed over it: a reader never sees half a report, a failure leaves the old one. */
function writeReport(target: string, text: string): void {
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`);
  try {
    writeFileSync(temporary, text, { flag: 'wx' });
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

interface ReadFile {
  file: string;
  loaded: LoadedScenario;
  /** The fixtures object the session starts with (the file's own), if any. */
  fixtures: Record<string, unknown> | undefined;
}

/** A user's file as text (src/lib/user-file.ts): a missing file, a directory, a FIFO or a device is `FILE:1:1: ...`, exit 2. */
function readText(scenarioFile: string, file: string, what: string, limitBytes: number): string {
  try {
    return readUserFile(file, limitBytes).toString('utf8');
  } catch (error) {
    if (!(error instanceof UserFileError)) throw error;
    const message = error.code === 'TOO_LARGE' ? `${what} is larger than ${sizeText(limitBytes)}, the most it may be` : `cannot read ${what}: ${error.message}`;
    throw new ScenarioFileError(scenarioFile, [{ line: 1, column: 1, path: file === scenarioFile ? '$' : '$.fixtures', message }]);
  }
}

/** Read, load and check one file, with its fixtures file when it names one (relative to the scenario file). */
function readScenario(file: string): ReadFile {
  const loaded = loadScenario(readText(file, file, 'the file', SCENARIO_LIMITS.bytes), file);
  const given = loaded.scenario.fixtures;
  if (given === undefined || typeof given === 'object') return { file, loaded, fixtures: given };
  const fixturesFile = path.resolve(path.dirname(file), given);
  const text = readText(file, fixturesFile, `fixtures ${given}`, SCENARIO_FIXTURES_FILE_LIMIT);
  let fixtures: unknown;
  try {
    fixtures = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ScenarioFileError(file, [{ line: 1, column: 1, path: '$.fixtures', message: `fixtures ${given} is not JSON: ${(error as Error).message}` }]);
  }
  if (fixtures === null || typeof fixtures !== 'object' || Array.isArray(fixtures)) {
    throw new ScenarioFileError(file, [{ line: 1, column: 1, path: '$.fixtures', message: `fixtures ${given} is not a fixtures object` }]);
  }
  return { file, loaded, fixtures: fixtures as Record<string, unknown> };
}

interface Target {
  url: string;
  /** The server's own fixtures' keys when this command started it. */
  serverKeys: KeyBook | null;
  close(): Promise<void>;
}

async function startTarget(args: Arguments): Promise<Target> {
  if (args.url !== null) return { url: args.url.replace(/\/+$/, ''), serverKeys: null, close: async () => {} };
  const { startServer } = await import('../server.js');
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', db: ':memory:' } });
  return { url: server.url, serverKeys: keyBookFromFixtures(server.ctx.fixtures), close: () => server.close() };
}

/** A receiver answering 204 to every delivery, for files with `webhooks: { receiver: true }`; started on first use. */
function lazyReceiver(): { url(): Promise<string>; close(): Promise<void> } {
  let server: Server | null = null;
  let address: Promise<string> | null = null;
  return {
    url() {
      address ??= new Promise<string>((resolve, reject) => {
        server = createServer((request, response) => {
          request.resume();
          request.on('end', () => response.writeHead(204).end());
        });
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
          const bound = server!.address();
          resolve(`http://127.0.0.1:${typeof bound === 'object' && bound ? bound.port : 0}/webhooks`);
        });
      });
      return address;
    },
    async close() {
      const open = server as Server | null;
      if (!open) return;
      open.closeAllConnections();
      await new Promise<void>((resolve) => open.close(() => resolve()));
    },
  };
}

interface Session {
  id: string;
  baseUrl: string;
  credentials: SessionCredentials;
}

class SessionError extends Error {}

async function controlFetch(url: string, init: RequestInit, adminToken: string | undefined): Promise<Response> {
  const headers = new Headers(init.headers);
  if (adminToken) headers.set('authorization', `Bearer ${adminToken}`);
  try {
    return await fetch(url, { ...init, headers, signal: AbortSignal.timeout(60_000) });
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    throw new SessionError(`${init.method ?? 'GET'} ${url} failed: ${(error as Error).message}${cause ? ` (${cause})` : ''}`);
  }
}

async function createSession(target: Target, read: ReadFile, adminToken: string | undefined): Promise<Session> {
  const scenario = read.loaded.scenario;
  const body = {
    label: 'service-sandbox-run',
    ...(scenario.seed !== undefined ? { seed: scenario.seed } : {}),
    ...(scenario.clock !== undefined ? { clock: scenario.clock } : {}),
    ...(read.fixtures !== undefined ? { fixtures: read.fixtures } : {}),
  };
  const response = await controlFetch(`${target.url}/_emulator/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, adminToken);
  const text = await response.text();
  if (response.status !== 201) {
    let message = text;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      // not JSON: the text as it is
    }
    throw new SessionError(`the server at ${target.url} refused the session (${response.status}): ${message}`);
  }
  return JSON.parse(text) as Session;
}

async function endSession(target: Target, session: Session, adminToken: string | undefined): Promise<void> {
  await controlFetch(`${target.url}/_emulator/sessions/${session.id}`, { method: 'DELETE' }, adminToken).catch(() => undefined);
}

function shown(value: unknown, limit = 2000): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > limit ? `${text.slice(0, limit)}... (${text.length} characters)` : text;
}

function stepLine(result: StepResult, total: number): string {
  const name = [result.id, result.caption].filter(Boolean).join(': ');
  const call = result.request ? ` ${result.request.method} ${result.request.path}${result.answer ? ` -> ${result.answer.status}` : ''}` : '';
  return `  ${result.passed ? 'ok  ' : 'FAIL'} ${result.index + 1}/${total} ${result.action}${call}${name ? `  (${name})` : ''} ${result.durationMs} ms`;
}

/** The failure's lines: where (file:line:column), what, and the request and answer. */
function failureLines(file: string, result: ScenarioResult): string[] {
  const failure = result.failure!;
  const lines = [`${file}:${failure.line}:${failure.column}: ${failure.message}`];
  const step = failure.step >= 0 ? result.steps[failure.step] : undefined;
  if (failure.step < 0) lines.push('    while building given');
  if (step) {
    lines.push(`    step ${step.index + 1}${step.id ? ` (${step.id})` : ''}${step.caption ? `: ${step.caption}` : ''}`);
    if (step.request) lines.push(`    request: ${step.request.method} ${step.request.path}${step.request.body !== undefined ? ` ${shown(step.request.body)}` : ''}`);
    if (step.answer) lines.push(`    answer: ${step.answer.status} ${shown(step.answer.body)}`);
  }
  return lines;
}

export async function runCommand(argv: string[], env: NodeJS.ProcessEnv, toStdout: (text: string) => void = (text) => process.stdout.write(text), toStderr: (text: string) => void = (text) => process.stderr.write(text)): Promise<number> {
  // docs/cli.md#run: captions, expectations and answers come from files and servers; their control characters are
  // printed escaped (the --json document is JSON, whose strings escape them already)
  const out = (text: string) => toStdout(terminalText(text));
  const err = (text: string) => toStderr(terminalText(text));
  let args: Arguments;
  try {
    args = parseArguments(argv, env);
  } catch (error) {
    if (error instanceof UsageError) {
      err(`service-sandbox run: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  // every file read and checked before anything is sent
  const files: ReadFile[] = [];
  const problems: string[] = [];
  for (const file of args.files) {
    try {
      const read = readScenario(file);
      const keys = read.fixtures !== undefined ? keyBookFromFixtures(read.fixtures) : null;
      if (keys) checkKeys(read.loaded, keys);
      files.push(read);
    } catch (error) {
      if (!(error instanceof ScenarioFileError)) throw error;
      problems.push(...error.lines());
    }
  }
  if (problems.length > 0) {
    err(`${problems.join('\n')}\n`);
    return 2;
  }

  let target: Target;
  try {
    target = await startTarget(args);
  } catch (error) {
    err(`service-sandbox run: cannot start a server: ${(error as Error).message}\n`);
    return 2;
  }
  const receiver = lazyReceiver();
  const reports: FileReport[] = files.map((read) => ({ file: read.file, name: read.loaded.scenario.name, steps: read.loaded.scenario.steps.map((step, index) => ({ index, id: step.id ?? null, caption: step.caption ?? null })), result: null, session: null }));
  let code = 0;
  try {
    for (const [index, read] of files.entries()) {
      const report = reports[index]!;
      let session: Session;
      try {
        session = await createSession(target, read, args.adminToken);
      } catch (error) {
        if (!(error instanceof SessionError)) throw error;
        err(`${read.file}:1:1: ${error.message}\n`);
        code = 2;
        break;
      }
      report.session = { id: session.id, baseUrl: session.baseUrl, kept: args.keepSession };
      try {
        const keys = (read.fixtures !== undefined ? keyBookFromFixtures(read.fixtures) : null) ?? target.serverKeys ?? keyBookFromSession(session.credentials);
        if (!args.json) out(`run ${read.file} (${read.loaded.scenario.name}) in session ${session.id}\n`);
        const total = read.loaded.scenario.steps.length;
        let result: ScenarioResult;
        try {
          result = await runScenario(httpTransport(session.baseUrl, { adminToken: args.adminToken, webhookReceiverUrl: () => receiver.url() }), read.loaded, keys, {
            onStep: (step) => {
              if (!args.json) out(`${stepLine(step, total)}\n`);
            },
          });
        } catch (error) {
          if (!(error instanceof ScenarioFileError)) throw error;
          // the key check against the session's own keys: still before any step was sent
          err(`${error.lines().join('\n')}\n`);
          code = 2;
          break;
        }
        report.result = result;
        if (!result.passed) {
          if (!args.json) err(`${failureLines(read.file, result).join('\n')}\n`);
          code = 1;
          break;
        }
      } finally {
        if (args.keepSession) {
          if (!args.json) out(`session ${session.id} kept: ${session.baseUrl}\n`);
        } else {
          await endSession(target, session, args.adminToken);
        }
      }
    }
  } finally {
    await receiver.close();
    await target.close();
  }
  if (args.junit) {
    try {
      writeReport(args.junit, junitReport(reports));
    } catch (error) {
      err(`service-sandbox run: --junit ${args.junit}: ${(error as Error).message}\n`);
      return code === 0 ? 2 : code;
    }
  }
  if (args.json) {
    out(`${JSON.stringify({ passed: code === 0, files: reports.map(jsonReport) }, null, 2)}\n`);
  } else if (code === 0) {
    out(`all ${files.length} scenario${files.length === 1 ? '' : 's'} passed\n`);
  }
  return code;
}

function jsonReport(report: FileReport) {
  const result = report.result;
  return {
    file: report.file,
    name: report.name,
    ran: result !== null,
    passed: result?.passed ?? false,
    durationMs: result?.durationMs ?? 0,
    session: report.session,
    ...(result?.failure ? { failure: result.failure } : {}),
    steps: result?.steps ?? [],
    given: result ? Object.fromEntries(Object.entries(result.state.given).map(([name, value]) => [name, value.id ?? null])) : {},
  };
}
