import { readFileSync } from 'node:fs';
import { signRequest } from '../lib/hmac.js';
import { DEFAULT_FIXTURES } from '../config.js';

// `service-sandbox sign METHOD TARGET` prints curl `-H` arguments (or a JSON object) with a fresh HMAC
// signature (docs/authentication.md#the-sign-helper), so documented examples can be pasted as they are:
//   curl -s http://127.0.0.1:4010/v1/accounts $(npx service-sandbox sign GET /v1/accounts)
// A target under /v1/payout-origination/ gets the payout variant (interface 4.12, 5.2): an RFC 3339
// timestamp and `sha256=<hex>`, the programme id left out of the signed string (docs/payouts.md#sending-a-pacs008-with-curl).

const PAYOUT_PATH = '/v1/payout-origination/';
const FORMATS = ['curl', 'json'] as const;
const OPTIONS = ['body', 'body-file', 'key', 'secret', 'program', 'user', 'fixtures', 'format'] as const;
type Option = (typeof OPTIONS)[number];

const USAGE =
  'usage: service-sandbox sign METHOD /path?query [--body TEXT | --body-file FILE] [--key K] [--secret S] [--program P] [--user U] [--fixtures FILE] [--format curl|json]';

interface FixtureKey {
  secret: string;
  programmeId: string;
  integrationType?: string;
}

/** Secret, programme and integration type of a key named in the fixtures file (FIXTURES or the default), if any. */
function keyFromFixtures(apiKey: string, fixturesPath: string): FixtureKey | undefined {
  try {
    const fixtures = JSON.parse(readFileSync(fixturesPath, 'utf8')) as {
      programmes?: Array<{ id: string; apiKeys?: Array<{ apiKey: string; secret: string; integrationType?: string }> }>;
    };
    for (const programme of fixtures.programmes ?? []) {
      const key = programme.apiKeys?.find((candidate) => candidate.apiKey === apiKey);
      if (key) return { secret: key.secret, programmeId: programme.id, integrationType: key.integrationType };
    }
  } catch {
    // no readable fixtures: fall back to explicit flags
  }
  return undefined;
}

class UsageError extends Error {}

function parseArguments(argv: string[]): { positional: string[]; options: Partial<Record<Option, string>> } {
  const positional: string[] = [];
  const options: Partial<Record<Option, string>> = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const name = arg.slice(2);
    if (!(OPTIONS as readonly string[]).includes(name)) throw new UsageError(`unknown option ${arg}; ${USAGE.slice('usage: '.length)}`);
    const value = argv[i + 1];
    if (value === undefined) throw new UsageError(`${arg} needs a value`);
    options[name as Option] = value;
    i += 1;
  }
  return { positional, options };
}

/** The body to sign, byte for byte as curl will send it (`--data-binary @FILE` for --body-file). */
function bodyOf(options: Partial<Record<Option, string>>): Buffer {
  if (options.body !== undefined && options['body-file'] !== undefined) throw new UsageError('--body and --body-file are exclusive');
  if (options['body-file'] === undefined) return Buffer.from(options.body ?? '', 'utf8');
  try {
    return readFileSync(options['body-file']);
  } catch (error) {
    throw new UsageError(`--body-file ${options['body-file']}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
}

function signedHeaders(argv: string[], env: NodeJS.ProcessEnv): { headers: Record<string, string>; format: (typeof FORMATS)[number] } {
  const { positional, options } = parseArguments(argv);
  const [method, target] = positional;
  if (!method || !target || !target.startsWith('/') || positional.length > 2) throw new UsageError(USAGE.slice('usage: '.length));
  if (options.format !== undefined && !(FORMATS as readonly string[]).includes(options.format)) {
    throw new UsageError(`--format "${options.format}": accepts curl or json`);
  }
  const apiKey = options.key ?? env.SANDBOX_API_KEY ?? 'pk_sandbox_single';
  // A key of the fixtures file brings its own secret and programme, so `--key pk_other_multi` just works.
  const known = keyFromFixtures(apiKey, options.fixtures ?? env.FIXTURES ?? DEFAULT_FIXTURES);
  const secret = options.secret ?? env.SANDBOX_API_SECRET ?? known?.secret;
  const programme = options.program ?? env.SANDBOX_PROGRAM_ID ?? known?.programmeId ?? 'prg_sandbox';
  if (!secret) throw new UsageError(`key ${apiKey} is not in the fixtures file; pass --secret (and --program)`);
  const user = options.user ?? env.SANDBOX_USER_ID;
  if (user !== undefined && known?.integrationType === 'SINGLE_USER') {
    // the server would answer 400 USER_ID_HEADER_NOT_ALLOWED (docs/authentication.md)
    const source = options.user !== undefined ? '--user' : 'SANDBOX_USER_ID';
    throw new UsageError(`${source} ${user}: key ${apiKey} is a SINGLE_USER key, bound to its own user; leave the user out or sign with a MULTI_USER key`);
  }
  const body = bodyOf(options);
  const payout = target.replace(/^\/_sessions\/[^/?]+/, '').startsWith(PAYOUT_PATH); // a session's target too (docs/sessions.md#addresses-and-signing)
  const timestamp = payout ? new Date().toISOString() : String(Date.now());
  const signature = signRequest({ apiKey, secret, timestamp, method, target, body });
  const headers: Record<string, string> = {
    'X-Service-Api-Key': apiKey,
    'X-Service-Timestamp': timestamp,
    'X-Service-Program-Id': programme,
    'X-Service-Signature': payout ? `sha256=${signature}` : signature,
  };
  if (user !== undefined) headers['X-Service-User-Id'] = user;
  return { headers, format: options.format === 'json' ? 'json' : 'curl' };
}

export function signCommand(argv: string[], env: NodeJS.ProcessEnv): number {
  let signed: ReturnType<typeof signedHeaders>;
  try {
    signed = signedHeaders(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`service-sandbox sign: ${error.message}\n`);
    return 2;
  }
  const { headers, format } = signed;
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify(headers)}\n`);
  } else {
    process.stdout.write(`${Object.entries(headers).map(([name, value]) => `-H ${name}:${value}`).join(' ')}\n`);
  }
  return 0;
}
