import { readFileSync } from 'node:fs';
import { signRequest } from '../lib/hmac.js';
import { DEFAULT_FIXTURES } from '../config.js';

/** Secret and programme of a key named in the fixtures file (FIXTURES or the default), if any. */
function keyFromFixtures(apiKey: string, fixturesPath: string): { secret: string; programmeId: string } | undefined {
  try {
    const fixtures = JSON.parse(readFileSync(fixturesPath, 'utf8')) as {
      programmes?: Array<{ id: string; apiKeys?: Array<{ apiKey: string; secret: string }> }>;
    };
    for (const programme of fixtures.programmes ?? []) {
      const key = programme.apiKeys?.find((candidate) => candidate.apiKey === apiKey);
      if (key) return { secret: key.secret, programmeId: programme.id };
    }
  } catch {
    // no readable fixtures: fall back to explicit flags
  }
  return undefined;
}

// `service-sandbox sign GET /v1/accounts` prints curl `-H` arguments with a fresh HMAC signature
// (contract 2), so README examples can be pasted as they are:
//   curl -s http://127.0.0.1:4010/v1/accounts $(npx service-sandbox sign GET /v1/accounts)
export function signCommand(argv: string[], env: NodeJS.ProcessEnv): number {
  const positional: string[] = [];
  const options: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg.startsWith('--')) {
      const value = argv[i + 1];
      if (value === undefined) {
        process.stderr.write(`service-sandbox sign: ${arg} needs a value\n`);
        return 2;
      }
      options[arg.slice(2)] = value;
      i += 1;
    } else positional.push(arg);
  }
  const [method, target] = positional;
  if (!method || !target || !target.startsWith('/')) {
    process.stderr.write('usage: service-sandbox sign METHOD /path?query [--body JSON] [--key K] [--secret S] [--program P] [--user U] [--fixtures FILE] [--format curl|json]\n');
    return 2;
  }
  const apiKey = options.key ?? env.SANDBOX_API_KEY ?? 'pk_sandbox_single';
  // A key of the fixtures file brings its own secret and programme, so `--key pk_other_multi` just works.
  const known = keyFromFixtures(apiKey, options.fixtures ?? env.FIXTURES ?? DEFAULT_FIXTURES);
  const secret = options.secret ?? env.SANDBOX_API_SECRET ?? known?.secret;
  const program = options.program ?? env.SANDBOX_PROGRAM_ID ?? known?.programmeId ?? 'prg_sandbox';
  if (!secret) {
    process.stderr.write(`service-sandbox sign: key ${apiKey} is not in the fixtures file; pass --secret (and --program)\n`);
    return 2;
  }
  const user = options.user ?? env.SANDBOX_USER_ID;
  const timestamp = String(Date.now());
  const signature = signRequest({ apiKey, secret, timestamp, method, target, body: options.body ?? '' });
  const headers: Record<string, string> = {
    'X-Service-Api-Key': apiKey,
    'X-Service-Timestamp': timestamp,
    'X-Service-Program-Id': program,
    'X-Service-Signature': signature,
  };
  if (user) headers['X-Service-User-Id'] = user;
  if (options.format === 'json') {
    process.stdout.write(`${JSON.stringify(headers)}\n`);
  } else {
    process.stdout.write(`${Object.entries(headers).map(([name, value]) => `-H ${name}:${value}`).join(' ')}\n`);
  }
  return 0;
}
