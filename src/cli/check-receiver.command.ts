import { DEFAULT_FIXTURES, emptyEnvMessage } from '../config.js';
import { FixturesError, loadFixtures } from '../fixtures/fixtures.loader.js';
import { CHECK_TIMEOUT_DEFAULT_MS, CHECK_TIMEOUT_MAX_MS, CHECK_TIMEOUT_MIN_MS } from '../faults/receiver-check.schema.js';
import { isHttpUrl } from '../lib/http-url.js';
import { runReceiverCheck, type CheckSubject } from '../faults/receiver-check.service.js';
import { terminalText } from '../lib/terminal-text.js';

// `service-sandbox check-receiver URL` (docs/faults.md#from-the-command-line): the receiver check of
// POST /_emulator/webhooks/check run in this process, no server needed, signed with a programme's webhook key and
// secret from the fixtures file. Exit 0 when every case passed, 1 when one failed, 2 on bad usage.

const USAGE = 'usage: service-sandbox check-receiver URL [--timeout MS] [--json] [--fixtures FILE] [--program PRG]';
const VALUE_OPTIONS = ['timeout', 'fixtures', 'program'] as const;
type ValueOption = (typeof VALUE_OPTIONS)[number];

class UsageError extends Error {}

interface Arguments {
  url: string;
  json: boolean;
  options: Partial<Record<ValueOption, string>>;
}

function parseArguments(argv: string[]): Arguments {
  const positional: string[] = [];
  const options: Partial<Record<ValueOption, string>> = {};
  let json = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const name = arg.slice(2);
    if (name === 'json') {
      json = true;
      continue;
    }
    if (!(VALUE_OPTIONS as readonly string[]).includes(name)) throw new UsageError(`unknown option ${arg}; ${USAGE.slice('usage: '.length)}`);
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${arg} needs a value`);
    options[name as ValueOption] = value;
    i += 1;
  }
  const [url] = positional;
  if (!url || positional.length > 1) throw new UsageError(USAGE.slice('usage: '.length));
  if (!isHttpUrl(url)) throw new UsageError(`URL "${url}": accepts an http:// or https:// URL, such as http://127.0.0.1:3000/webhooks`);
  return { url, json, options };
}

function timeoutOf(text: string | undefined): number {
  if (text === undefined) return CHECK_TIMEOUT_DEFAULT_MS;
  const value = Number(text);
  if (!/^[0-9]+$/.test(text) || value < CHECK_TIMEOUT_MIN_MS || value > CHECK_TIMEOUT_MAX_MS) {
    throw new UsageError(`--timeout "${text}": accepts an integer number of milliseconds ${CHECK_TIMEOUT_MIN_MS}-${CHECK_TIMEOUT_MAX_MS}`);
  }
  return value;
}

/** The webhook key and secret of the named programme, or of the file's first one. */
function subjectOf(args: Arguments, env: NodeJS.ProcessEnv): CheckSubject {
  if (env.FIXTURES === '') throw new UsageError(emptyEnvMessage('FIXTURES'));
  const file = args.options.fixtures ?? env.FIXTURES ?? DEFAULT_FIXTURES;
  let fixtures;
  try {
    fixtures = loadFixtures(file);
  } catch (error) {
    if (error instanceof FixturesError) throw new UsageError(`--fixtures / FIXTURES: ${error.message}`);
    throw error;
  }
  const wanted = args.options.program;
  const programme = wanted ? fixtures.programmes.find((candidate) => candidate.id === wanted) : fixtures.programmes[0];
  if (!programme) throw new UsageError(`--program ${wanted}: not a programme of ${file} (${fixtures.programmes.map((p) => p.id).join(', ')})`);
  return {
    url: args.url,
    programmeId: programme.id,
    apiKey: programme.webhook.apiKey,
    secret: programme.webhook.secret,
    occurredAt: new Date().toISOString(),
    timeoutMs: timeoutOf(args.options.timeout),
  };
}

export async function checkReceiverCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let subject: CheckSubject;
  let json: boolean;
  try {
    const args = parseArguments(argv);
    json = args.json;
    subject = subjectOf(args, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`service-sandbox check-receiver: ${error.message}\n`);
    return 2;
  }
  const report = await runReceiverCheck(subject);
  // docs/cli.md#what-run-prints: the receiver's answer is printed with control characters escaped
  process.stdout.write(terminalText(json ? `${JSON.stringify(report, null, 2)}\n` : report.summary));
  return report.passed ? 0 : 1;
}
