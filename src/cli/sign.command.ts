import { signRequest } from '../lib/hmac.js';
import { readUserFile, UserFileError } from '../lib/user-file.js';
import { DEFAULT_FIXTURES, emptyEnvMessage, FIXTURES_FILE_LIMIT } from '../config.js';

// `service-sandbox sign METHOD TARGET` prints curl `-H` arguments (or a JSON object) with a fresh HMAC
// signature (docs/authentication.md#the-sign-helper), so documented examples can be pasted as they are:
//   curl -s http://127.0.0.1:4010/v1/accounts $(npx service-sandbox sign GET /v1/accounts)
// A target under /v1/payout-origination/ gets the payout variant (interface 4.12, 5.2): an RFC 3339
// timestamp and `sha256=<hex>`, the programme id left out of the signed string (docs/payouts.md#sending-a-pacs008-with-curl).

const PAYOUT_PATH = '/v1/payout-origination/';
/** The methods a route of the API answers: another would sign a request no route takes (docs/authentication.md#the-sign-helper). */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
/** The largest body a route takes (information-request entries, 20 MiB): a larger file could never be sent. */
const BODY_FILE_LIMIT = 20 * 1024 * 1024;
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

/**
 * Secret, programme and integration type of a key named in the fixtures file, if any. The default file unreadable, the
 * flags must say it all; a file the user named (--fixtures, FIXTURES) that cannot be read is bad usage.
 */
function keyFromFixtures(apiKey: string, fixturesPath: string, named: string | null): FixtureKey | undefined {
  let fixtures: { programmes?: Array<{ id: string; apiKeys?: Array<{ apiKey: string; secret: string; integrationType?: string }> }> };
  try {
    const text = readUserFile(fixturesPath, FIXTURES_FILE_LIMIT).toString('utf8');
    fixtures = JSON.parse(text.replace(/^\uFEFF/, '')) as typeof fixtures;
  } catch (error) {
    if (named === null) return undefined;
    throw new UsageError(`${named} ${fixturesPath}: ${error instanceof UserFileError ? `cannot read it: ${error.message}` : `not a fixtures JSON file (${(error as Error).message})`}`);
  }
  for (const programme of Array.isArray(fixtures?.programmes) ? fixtures.programmes : []) {
    const key = Array.isArray(programme?.apiKeys) ? programme.apiKeys.find((candidate) => candidate?.apiKey === apiKey) : undefined;
    if (key) return { secret: key.secret, programmeId: programme.id, integrationType: key.integrationType };
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
    // `--user --format json`: the next flag is not this one's value
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${arg} needs a value`);
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
    return readUserFile(options['body-file'], BODY_FILE_LIMIT);
  } catch (error) {
    if (error instanceof UserFileError) throw new UsageError(`--body-file ${options['body-file']}: ${error.message}`);
    throw error;
  }
}

function signedHeaders(argv: string[], env: NodeJS.ProcessEnv): { headers: Record<string, string>; format: (typeof FORMATS)[number] } {
  const { positional, options } = parseArguments(argv);
  const [method, target] = positional;
  if (!method || !target || !target.startsWith('/') || positional.length > 2) throw new UsageError(USAGE.slice('usage: '.length));
  if (!(METHODS as readonly string[]).includes(method.toUpperCase())) throw new UsageError(`method "${method}": accepts ${METHODS.join(', ')}`);
  // a line break would end the request line and add a header of its own; no URL holds a control character or a space
  if (/[\u0000-\u0020\u007f]/.test(target)) throw new UsageError(`target ${JSON.stringify(target)}: a request target holds no spaces or control characters (percent-encode them)`);
  if (options.format !== undefined && !(FORMATS as readonly string[]).includes(options.format)) {
    throw new UsageError(`--format "${options.format}": accepts curl or json`);
  }
  const fromEnv = (name: string) => {
    if (env[name] === '') throw new UsageError(emptyEnvMessage(name));
    return env[name];
  };
  for (const [flag, value] of Object.entries(options)) if (value === '' && flag !== 'body') throw new UsageError(`--${flag} is empty: give a value, or leave the flag out`);
  const apiKey = options.key ?? fromEnv('SANDBOX_API_KEY') ?? 'pk_sandbox_single';
  // A key of the fixtures file brings its own secret and programme, so `--key pk_other_multi` just works.
  const namedFixtures = options.fixtures !== undefined ? '--fixtures' : fromEnv('FIXTURES') !== undefined ? 'FIXTURES' : null;
  const known = keyFromFixtures(apiKey, options.fixtures ?? fromEnv('FIXTURES') ?? DEFAULT_FIXTURES, namedFixtures);
  const secret = options.secret ?? fromEnv('SANDBOX_API_SECRET') ?? known?.secret;
  const programme = options.program ?? fromEnv('SANDBOX_PROGRAM_ID') ?? known?.programmeId ?? 'prg_sandbox';
  if (!secret) throw new UsageError(`key ${apiKey} is not in the fixtures file; pass --secret (and --program)`);
  const user = options.user ?? fromEnv('SANDBOX_USER_ID');
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
