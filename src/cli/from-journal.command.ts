import { emptyEnvMessage } from '../config.js';
import { readUserFile, UserFileError } from '../lib/user-file.js';
import { scenarioFromJournal, type JournalEntry } from '../scenarios/scenario.from-journal.js';
import { isHttpUrl } from '../lib/http-url.js';

// `service-sandbox scenario-from-journal [--url URL | --journal FILE] [--name NAME] [--admin-token TOKEN]`
// (docs/scenarios.md#from-a-request-journal-to-a-scenario): prints a scenario skeleton made from a sandbox's request
// journal (GET {url}/_emulator/requests, or a saved answer of it), one step per recorded call, for the author to
// caption and check.

const USAGE = 'service-sandbox scenario-from-journal [--url URL | --journal FILE] [--name NAME] [--admin-token TOKEN]';

class UsageError extends Error {}

function parse(argv: string[], env: NodeJS.ProcessEnv): { url: string | null; journal: string | null; name: string; adminToken: string | undefined } {
  if (env.ADMIN_TOKEN === '') throw new UsageError(emptyEnvMessage('ADMIN_TOKEN'));
  const args = { url: null as string | null, journal: null as string | null, name: 'recorded', adminToken: env.ADMIN_TOKEN };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`${arg} needs a value`);
      return next;
    };
    if (arg === '--url') args.url = value();
    else if (arg === '--journal') args.journal = value();
    else if (arg === '--name') args.name = value();
    else if (arg === '--admin-token') args.adminToken = value();
    else throw new UsageError(`unknown argument ${arg}; usage: ${USAGE}`);
  }
  if (args.url !== null && args.journal !== null) throw new UsageError('--url and --journal are exclusive');
  if (args.url === null && args.journal === null) args.url = 'http://127.0.0.1:4010';
  if (args.url !== null && !isHttpUrl(args.url)) throw new UsageError(`--url "${args.url}": accepts an http:// or https:// URL, such as http://127.0.0.1:4010`);
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(args.name)) throw new UsageError(`--name "${args.name}": lower-case letters, digits and - (at most 64), as a scenario's name`);
  return args;
}

/**
 * The most a saved journal may hold: the answer of GET /_emulator/requests at the largest --journal-size (100,000
 * entries) with the journal's 8 MiB of kept bodies stays well under it.
 */
const JOURNAL_FILE_LIMIT = 64 * 1024 * 1024;

function readJournal(file: string): string {
  try {
    return readUserFile(file, JOURNAL_FILE_LIMIT).toString('utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    if (error instanceof UserFileError) throw new UsageError(`--journal ${file}: cannot read it: ${error.message}`);
    throw error;
  }
}

function entriesOf(answer: unknown): JournalEntry[] {
  const data = (answer as { data?: unknown } | null)?.data ?? answer;
  if (!Array.isArray(data)) throw new UsageError('the journal is not the answer of GET /_emulator/requests (no data list)');
  return data.filter((entry): entry is JournalEntry => entry !== null && typeof entry === 'object' && typeof entry.method === 'string' && typeof entry.path === 'string' && typeof entry.status === 'number');
}

export async function fromJournalCommand(argv: string[], env: NodeJS.ProcessEnv, out: (text: string) => void = (text) => process.stdout.write(text), err: (text: string) => void = (text) => process.stderr.write(text)): Promise<number> {
  try {
    const args = parse(argv, env);
    let answer: unknown;
    if (args.journal !== null) {
      answer = JSON.parse(readJournal(args.journal));
    } else {
      const base = args.url!.replace(/\/+$/, '');
      const response = await fetch(`${base}/_emulator/requests`, { headers: args.adminToken ? { authorization: `Bearer ${args.adminToken}` } : {}, signal: AbortSignal.timeout(30_000) });
      if (response.status !== 200) throw new UsageError(`GET ${base}/_emulator/requests answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
      answer = await response.json();
    }
    out(scenarioFromJournal(entriesOf(answer), { name: args.name }));
    return 0;
  } catch (error) {
    const message = error instanceof UsageError ? error.message : error instanceof SyntaxError ? `the journal is not JSON: ${error.message}` : (error as Error).message;
    err(`service-sandbox scenario-from-journal: ${message}\n`);
    return error instanceof UsageError || error instanceof SyntaxError || (error as NodeJS.ErrnoException).code !== undefined ? 2 : 1;
  }
}
