import { forwardWebhooks, WebhookForwardingError, type ForwardedDelivery, type WebhookForwarder } from '../client/forward.js';
import { emptyEnvMessage } from '../config.js';
import { terminalText } from '../lib/terminal-text.js';
import { isHttpUrl } from '../lib/http-url.js';

// `service-sandbox listen --forward-to URL` (docs/cli.md#listen, docs/webhooks.md#listen): webhooks for an app the
// emulator cannot reach (the emulator in a container, the app on the host). The forwarding itself is the client kit's
// forwardWebhooks (src/client/forward.ts, one implementation for the kit and the CLI); this is its terminal: a line per
// delivery, the Ready line, and the exit code. Exit 2 on bad usage, a refusal of the emulator, or a session that has
// ended (one line); 0 when interrupted, replaced by another listener or stopped by DELETE; while the emulator cannot
// be reached it keeps trying every second.

const USAGE = 'usage: service-sandbox listen --forward-to URL [--url SANDBOX_URL] [--session ID] [--admin-token TOKEN] [--json]';
const VALUE_OPTIONS = ['forward-to', 'url', 'session', 'admin-token'] as const;
type ValueOption = (typeof VALUE_OPTIONS)[number];

/** How long the command waits before trying again when the emulator cannot be reached. */
const RECONNECT_MS = 1000;

class UsageError extends Error {}

interface ListenArguments {
  forwardTo: string;
  base: string;
  adminToken: string | undefined;
  json: boolean;
}

function parseArguments(argv: string[], env: NodeJS.ProcessEnv): ListenArguments {
  const options: Partial<Record<ValueOption, string>> = {};
  let json = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--json') {
      json = true;
      continue;
    }
    const name = arg.startsWith('--') ? arg.slice(2) : '';
    if (!(VALUE_OPTIONS as readonly string[]).includes(name)) throw new UsageError(`unknown argument ${arg}; ${USAGE.slice('usage: '.length)}`);
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${arg} needs a value`);
    options[name as ValueOption] = value;
    i += 1;
  }
  for (const name of ['SANDBOX_URL', 'ADMIN_TOKEN']) if (env[name] === '') throw new UsageError(emptyEnvMessage(name));
  const forwardTo = options['forward-to'];
  if (!forwardTo) throw new UsageError(`--forward-to is required; ${USAGE.slice('usage: '.length)}`);
  if (!isHttpUrl(forwardTo)) throw new UsageError(`--forward-to "${forwardTo}": accepts an http:// or https:// URL, such as http://127.0.0.1:3000/webhooks`);
  const url = (options.url ?? env.SANDBOX_URL ?? 'http://127.0.0.1:4010').replace(/\/+$/, '');
  if (!isHttpUrl(url)) throw new UsageError(`--url / SANDBOX_URL "${url}": accepts the emulator's http:// or https:// address, such as http://127.0.0.1:4010`);
  const session = options.session;
  if (session !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(session)) throw new UsageError(`--session "${session}": accepts a session id such as ses_5f0c1a9e2b7d4c31`);
  return {
    forwardTo,
    base: session ? `${url}/_sessions/${session}` : url,
    adminToken: options['admin-token'] ?? env.ADMIN_TOKEN,
    json,
  };
}

/** The line printed for one delivery: time, event type, event id, the app's status (or error) and latency. */
function lineOf({ result, eventType, eventId }: ForwardedDelivery): string {
  const outcome = result.status !== null ? `-> ${result.status}` : `-> failed (${result.error})`;
  return `${new Date().toISOString()}  ${eventType ?? '-'}  ${eventId ?? '-'}  ${outcome}  ${result.latencyMs} ms\n`;
}

export async function listenCommand(argv: string[], env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<number> {
  let args: ListenArguments;
  try {
    args = parseArguments(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`service-sandbox listen: ${error.message}\n`);
    return 2;
  }
  // docs/cli.md#what-run-prints: the app's answers and the server's messages are printed with control characters escaped
  const say = (line: string) => process.stdout.write(terminalText(line));
  const complain = (line: string) => process.stderr.write(terminalText(`service-sandbox listen: ${line}\n`));
  let forwarder: WebhookForwarder | undefined;
  while (!forwarder) {
    try {
      forwarder = await forwardWebhooks(args.base, args.forwardTo, {
        signal,
        ...(args.adminToken ? { adminToken: args.adminToken } : {}),
        reconnectDelayMs: RECONNECT_MS,
        onReady: ({ listenerId }) => say(`Ready: webhooks of ${args.base} go to ${args.forwardTo} (listener ${listenerId}); Ctrl+C to stop\n`),
        onDelivery: (delivery) =>
          say(
            args.json
              ? `${JSON.stringify({ at: new Date().toISOString(), eventType: delivery.eventType, deliveryId: delivery.attempt.deliveryId, ...delivery.result })}\n`
              : lineOf(delivery),
          ),
        onReconnecting: ({ message, delayMs }) => complain(`${message}; connecting again in ${delayMs / 1000} s`),
      });
    } catch (error) {
      if (signal.aborted) return 0;
      if (!(error instanceof WebhookForwardingError)) throw error;
      complain(error.code === 'UNREACHABLE' ? `${error.message}; connecting again in ${RECONNECT_MS / 1000} s` : error.message);
      if (error.code !== 'UNREACHABLE') return 2;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, RECONNECT_MS);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      if (signal.aborted) return 0;
    }
  }
  const end = await forwarder.ended;
  switch (end.reason) {
    case 'stopped':
      return 0;
    case 'replaced':
    case 'relay-stopped':
      say(`${new Date().toISOString()}  ${end.message}\n`);
      return 0;
    case 'session-ended':
    case 'refused':
      complain(end.message);
      return 2;
  }
}
