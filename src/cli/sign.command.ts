import { signRequest } from '../lib/hmac.js';

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
    process.stderr.write('usage: service-sandbox sign METHOD /path?query [--body JSON] [--key K] [--secret S] [--program P] [--user U] [--format curl|json]\n');
    return 2;
  }
  const apiKey = options.key ?? env.SANDBOX_API_KEY ?? 'pk_sandbox_single';
  const secret = options.secret ?? env.SANDBOX_API_SECRET ?? (apiKey === 'pk_sandbox_multi' ? 'sk_sandbox_multi_secret' : 'sk_sandbox_single_secret');
  const program = options.program ?? env.SANDBOX_PROGRAM_ID ?? 'prg_sandbox';
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
