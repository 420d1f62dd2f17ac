#!/usr/bin/env node
import { lookup } from 'node:dns/promises';
import { setFlagsFromString } from 'node:v8';
import type { AddressInfo } from 'node:net';
import { ConfigError, DEFAULT_FIXTURES, OPTIONS, parseConfig, type Config } from './config.js';
import { signCommand } from './cli/sign.command.js';

// `service-sandbox [serve] [flags]` serves the emulator; `service-sandbox sign ...` prints HMAC headers;
// `service-sandbox check-receiver URL` checks a webhook receiver (docs/faults.md#from-the-command-line);
// `service-sandbox listen --forward-to URL` brings a sandbox's webhooks to an app it cannot reach (docs/cli.md#listen);
// `service-sandbox run FILE...` runs scenario files (docs/cli.md#run).
async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'sign') {
    process.exitCode = signCommand(rest, process.env);
    return;
  }
  if (command === 'check-receiver') {
    // loaded only for this command, like the server below
    const { checkReceiverCommand } = await import('./cli/check-receiver.command.js');
    process.exitCode = await checkReceiverCommand(rest, process.env);
    return;
  }
  if (command === 'listen') {
    const { listenCommand } = await import('./cli/listen.command.js');
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    process.once('SIGTERM', () => stop.abort());
    process.exitCode = await listenCommand(rest, process.env, stop.signal);
    return;
  }
  if (command === 'run') {
    // docs/cli.md#run
    const { runCommand } = await import('./cli/run.command.js');
    process.exitCode = await runCommand(rest, process.env);
    return;
  }
  if (command === 'scenario-from-journal') {
    // docs/scenarios.md#the-skeleton-command
    const { fromJournalCommand } = await import('./cli/from-journal.command.js');
    process.exitCode = await fromJournalCommand(rest, process.env);
    return;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return;
  }
  const args = command === 'serve' ? rest : argv;
  let config: Config;
  try {
    config = parseConfig(args, process.env);
    await checkHostResolves(config.host);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`service-sandbox: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  // Memory (RSS under 150 MB with 1,000,000 transactions, docs/benchmarks.md): under load V8 lets the old generation
  // grow several times past its live size before collecting. Request journal entries live for N requests,
  // so they are promoted and die there, and a 20 MB live heap peaked near 170 MB of RSS. Growing by at most
  // 20% per collection keeps the peak near 125 MB at the same throughput (measured with bench/). V8 reads
  // this flag at each collection, so setting it at run time takes effect. The young generation's size cannot be
  // set from here: `npm start` and the image pass --max-semi-space-size=4 to Node (docs/configuration.md#nodes-flags).
  setFlagsFromString('--heap-growing-percent=20');
  // The server and every domain load only once the flags are known good, so a bad flag (and `sign`)
  // answers without loading the whole app.
  const { startServer } = await import('./server.js');
  const { FixturesError } = await import('./fixtures/fixtures.loader.js');
  const { DatabaseRefusal } = await import('./db/connection.js');
  let server;
  try {
    server = await startServer({ config });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`service-sandbox: ${error.message}\n`);
      process.exit(2);
    }
    if (error instanceof FixturesError) {
      process.stderr.write(`service-sandbox: ${fixturesFailure(error.message, error.seeding, config)}\n`);
      process.exit(2);
    }
    if (error instanceof DatabaseRefusal) {
      process.stderr.write(`service-sandbox: invalid --db / DB_PATH "${config.db}": cannot use this file: ${error.message}\n`);
      process.exit(2);
    }
    const line = startupFailure(error, config);
    if (line) {
      process.stderr.write(`service-sandbox: ${line}\n`);
      process.exit(2);
    }
    throw error;
  }
  const bound = server.app.server.address() as AddressInfo;
  process.stdout.write(`${listeningLine(bound, server.url)}\n`);
  const exposed = exposure(bound, config);
  if (exposed && !['silent', 'fatal', 'error'].includes(config.logLevel)) process.stderr.write(`service-sandbox: ${exposed}\n`);
  // docs/decisions.md#shutdown: open requests get SHUTDOWN_GRACE_MS, then their connections are closed; a second
  // signal, or a close that still has not finished a few seconds later, exits at once
  let stopping = false;
  const shutdown = () => {
    if (stopping) process.exit(1);
    stopping = true;
    setTimeout(() => process.exit(1), 10_000).unref();
    void server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // docs/decisions.md#shutdown: started through `npx` (npm exec -> sh -> node), a SIGTERM to npm ends its shell and
  // leaves node to init; the server stops as on SIGTERM once the process that started it is gone.
  const parent = process.ppid;
  if (parent > 1) setInterval(() => process.ppid !== parent && shutdown(), 1_000).unref();
}

/** A `--host` that does not resolve stops start-up naming the flag (docs/configuration.md), not with a stack. */
async function checkHostResolves(host: string): Promise<void> {
  try {
    await lookup(host);
  } catch (error) {
    throw new ConfigError(`invalid --host / HOST "${host}": accepts a host name or IP address that resolves (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/**
 * docs/configuration.md#listening-beyond-this-machine: the address the server is bound to. A wildcard (0.0.0.0, ::) is
 * every interface; the line then also gives the address to use from this machine.
 */
function listeningLine(bound: AddressInfo, url: string): string {
  const links = (base: string) => `docs ${base}/docs, dashboard ${base}/_emulator/ui`;
  if (bound.address === '0.0.0.0' || bound.address === '::') {
    const every = bound.address === '::' ? 'every interface, IPv6 and IPv4' : 'every IPv4 interface';
    const shown = bound.address === '::' ? `[::]` : bound.address;
    return `service-sandbox listening on http://${shown}:${bound.port} (${every}; from this machine ${url}, ${links(url)})`;
  }
  return `service-sandbox listening on ${url} (${links(url)})`;
}

/** The warning of a server others can reach with no admin token; undefined when it listens on loopback only or has one. */
function exposure(bound: AddressInfo, config: Config): string | undefined {
  if (isLoopback(bound.address) || config.adminToken !== undefined) return undefined;
  return (
    `warning: listening on ${bound.address} with no admin token: anyone who can reach port ${bound.port} can reset the sandbox, act as its users ` +
    'and make the server send requests to addresses of their choosing; set ADMIN_TOKEN (or --admin-token) to require a token on the control plane ' +
    '(docs/configuration.md#listening-beyond-this-machine)'
  );
}

function isLoopback(address: string): boolean {
  return /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);
}

/**
 * A fixtures file that could not be loaded or seeded. The default fixtures, which load, fail only at a `--clock` before
 * their dates (a date of birth in 1985): then --clock is the flag to name (docs/configuration.md#clock).
 */
function fixturesFailure(message: string, seeding: boolean, config: Config): string {
  const frozenAt = config.clock !== undefined && config.clock !== 'realtime' ? config.clock : undefined;
  if (seeding && frozenAt !== undefined && config.fixtures === DEFAULT_FIXTURES) {
    return `invalid --clock / CLOCK "${frozenAt}": the default fixtures cannot be seeded at that instant (${message}); start the clock at a later instant, or give --fixtures of your own`;
  }
  return `--fixtures / FIXTURES: ${message}${seeding && frozenAt !== undefined ? ` (seeded at --clock ${frozenAt})` : ''}`;
}

/** One line naming the flag for the start-up failures a flag's value causes; undefined for anything else. */
function startupFailure(error: unknown, config: Config): string | undefined {
  const code = String((error as NodeJS.ErrnoException).code ?? '');
  const message = (error as Error).message.split('\n')[0];
  if (code === 'EADDRINUSE') return `invalid --port / PORT "${config.port}": cannot listen, the address is in use (${message})`;
  if (code === 'EACCES') return `invalid --port / PORT "${config.port}": cannot listen, permission denied (${message})`;
  if (code === 'EADDRNOTAVAIL') return `invalid --host / HOST "${config.host}": cannot listen, not an address of this machine (${message})`;
  if (code.startsWith('SQLITE_')) return `invalid --db / DB_PATH "${config.db}": cannot open the database (${message})`;
  return undefined;
}

/** Text broken at ", " so that no line passes 110 characters; the first line has `first` characters left. */
function wrap(text: string, first: number): string {
  const lines: string[] = [''];
  let room = first;
  for (const word of text.split(' ')) {
    const line = lines[lines.length - 1]!;
    if (line && line.length + 1 + word.length > room) {
      lines.push(word);
      room = 110;
    } else {
      lines[lines.length - 1] = line ? `${line} ${word}` : word;
    }
  }
  return lines.join('\n');
}

const HELP = `service-sandbox: local emulator of the payments and accounts API

Usage:
  service-sandbox [serve] [--port 4010] [--host 127.0.0.1] [--db :memory:|FILE] [--fixtures FILE]
                  [--seed TEXT] [--clock realtime|ISO-INSTANT] [--webhook-url URL] [--log-level LEVEL]
                  [--admin-token TOKEN] [--allowed-hosts NAMES] [--journal-size N] [--webhook-timeout-ms MS] [--read-cache on|off]
                  [--snapshot FILE] [--scenarios DIR] [--max-sessions N] [--session-idle-timeout SECONDS]
  service-sandbox sign METHOD TARGET [--body TEXT | --body-file FILE] [--key API_KEY] [--secret SECRET]
                  [--program PRG] [--user USR] [--fixtures FILE] [--format curl|json]
                  prints curl -H arguments for an HMAC-signed request (defaults: the SINGLE_USER sandbox key);
                  a /v1/payout-origination/ target gets the payout variant (RFC 3339 timestamp, sha256=)
  service-sandbox scenario-from-journal [--url URL | --journal FILE] [--name NAME] [--admin-token TOKEN]
                  prints a scenario skeleton made from a sandbox's request journal (docs/scenarios.md)
  service-sandbox check-receiver URL [--timeout MS] [--json] [--fixtures FILE] [--program PRG]
                  sends eight signed webhook deliveries (valid, bad signature, tampered body, stale and future
                  timestamp, unknown key, duplicate, query string) to URL and prints what the receiver got
                  wrong; exit 0 all passed, 1 one failed, 2 bad usage (docs/faults.md#receiver-check)
  service-sandbox listen --forward-to URL [--url SANDBOX_URL] [--session ID] [--admin-token TOKEN] [--json]
                  connects out to a running emulator and posts each of its webhook deliveries to URL, signed
                  for URL's path, reporting the answers back (an emulator in a container, an app on the host);
                  one line per delivery; runs until interrupted (docs/cli.md#listen)
  service-sandbox run FILE... [--url URL] [--session] [--junit FILE] [--json] [--admin-token TOKEN]
                  runs each scenario file (YAML or JSON) in a fresh session of the server at URL, or of a
                  server it starts itself; one line per step; --session keeps each session and prints its
                  baseUrl (with --url); --junit writes a JUnit XML report, --json prints one JSON document;
                  exit 0 all passed, 1 a step failed, 2 bad arguments or a bad file (docs/cli.md#run)

Every flag also reads an environment variable (${wrap(OPTIONS.map((option) => option.env).join(', '), 58)}).
See docs/configuration.md.
`;

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`service-sandbox: ${(error as Error).message}\n`);
  process.exit(1);
});
