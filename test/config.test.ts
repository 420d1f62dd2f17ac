import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ConfigError, DEFAULT_FIXTURES, OPTIONS, clockStart, parseConfig } from '../src/config.js';
import { signRequest } from '../src/lib/hmac.js';
import { CLI as SERVER_CLI, ensureBuilt } from './helpers/server-process.js';
import { plainNode } from './helpers/node-child.js';

// docs/configuration.md: every flag and its environment variable through one zod schema; a bad value stops start-up
// with one line naming the flag and what it accepts (exit code 2).

t.test('defaults', async (t) => {
  t.same(parseConfig([], {}), {
    port: 4010,
    host: '127.0.0.1',
    db: ':memory:',
    fixtures: DEFAULT_FIXTURES,
    // no seed: ids follow DEFAULT_SEED, sessions a seed of the start's own (docs/sessions.md#ids)
    // no clock: a database file resumes its stored clock, a new one starts in real time (clockStart below)
    logLevel: 'info',
    allowedHosts: [], // beyond IP addresses, localhost and single-label names (docs/robustness.md#web-pages)
    journalSize: 1000,
    webhookTimeoutMs: 10000,
    readCache: 'on',
    maxSessions: 64,
    sessionIdleTimeout: 900,
  });
  t.ok(existsSync(DEFAULT_FIXTURES), 'the default fixtures file exists');
});

// One accepted value per option, as a flag and as its environment variable.
const GOOD: Record<(typeof OPTIONS)[number]['key'], [string, unknown]> = {
  port: ['5050', 5050],
  host: ['0.0.0.0', '0.0.0.0'],
  db: ['/tmp/sandbox.db', '/tmp/sandbox.db'],
  fixtures: ['/tmp/my-fixtures.json', '/tmp/my-fixtures.json'],
  seed: ['my-seed', 'my-seed'],
  clock: ['2026-03-01T12:00:00.000Z', '2026-03-01T12:00:00.000Z'],
  webhookUrl: ['http://127.0.0.1:9999/hooks', 'http://127.0.0.1:9999/hooks'],
  logLevel: ['debug', 'debug'],
  adminToken: ['let-me-in', 'let-me-in'],
  allowedHosts: ['Sandbox.Example.com, .corp.test,*', ['sandbox.example.com', '.corp.test', '*']],
  journalSize: ['50', 50],
  webhookTimeoutMs: ['2500', 2500],
  readCache: ['off', 'off'],
  // any existing file passes the flag check; whether it is a snapshot is checked at start-up (snapshots-startup.test.ts)
  snapshot: [DEFAULT_FIXTURES, DEFAULT_FIXTURES],
  scenarios: [tmpdir(), tmpdir()],
  maxSessions: ['0', 0],
  sessionIdleTimeout: ['30', 30],
};

// Values each option refuses.
const BAD: Record<(typeof OPTIONS)[number]['key'], string[]> = {
  // plain digits only, as the API reads an integer query parameter (docs/configuration.md)
  port: ['abc', '70000', '-1', '80.5', '0x1196', '1e3', ' 4502', '4502 ', '+4502', ''],
  host: [''],
  db: ['', '/nonexistent-directory/sandbox.db', tmpdir()],
  fixtures: [''],
  seed: [''],
  clock: [
    'yesterday',
    '2026-13-01T00:00:00Z',
    '2026-03-01',
    '1700000000000',
    // dates and times that do not exist (Date.parse alone rolls the first two over into March)
    '2026-02-30T00:00:00Z',
    '2026-02-29T12:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-03-01T24:00:00Z',
    '2026-03-01T12:60:00Z',
    '2026-03-01T12:00:60Z',
    '2026-03-01T12:00:00+24:00',
    // past the last instant the clock can hold, or before the first (docs/decisions.md#clock-range)
    '9999-12-31T23:59:59.999-00:01',
    '0000-01-01T00:00:00+00:01',
  ],
  webhookUrl: ['ftp://example.com/x', 'not a url', 'http//missing-colon'],
  logLevel: ['loud', 'INFO '],
  adminToken: [''],
  allowedHosts: ['', ',', 'http://example.com', 'a b', 'example.com:4010'],
  journalSize: ['-1', 'many', '100001', '1e3', '0x10'],
  webhookTimeoutMs: ['0', '1.5', '600001', '1e3'],
  readCache: ['no', 'OFF', 'true'],
  snapshot: ['', '/nonexistent-directory/state.sandbox-snapshot', tmpdir()],
  scenarios: ['', '/nonexistent-directory/scenarios', DEFAULT_FIXTURES],
  maxSessions: ['-1', '1001', 'lots', '2.5'],
  sessionIdleTimeout: ['0', '86401', '1.5', 'never'],
};

t.test('every option as a flag, as --flag=value and as an environment variable', async (t) => {
  t.equal(OPTIONS.length, Object.keys(GOOD).length, 'the test covers every option');
  for (const option of OPTIONS) {
    const [raw, expected] = GOOD[option.key];
    t.same(parseConfig([option.flag, raw], {})[option.key], expected, `${option.flag} ${raw}`);
    t.same(parseConfig([`${option.flag}=${raw}`], {})[option.key], expected, `${option.flag}=${raw}`);
    t.same(parseConfig([], { [option.env]: raw })[option.key], expected, `${option.env}=${raw}`);
  }
});

t.test('a flag wins over its environment variable; an empty variable counts as unset, but for ADMIN_TOKEN', async (t) => {
  t.equal(parseConfig(['--port', '5001'], { PORT: '5002' }).port, 5001);
  // compose's `WEBHOOK_URL: ${WEBHOOK_URL:-}` writes empty variables (docs/configuration.md)
  const defaults = parseConfig([], {});
  for (const option of OPTIONS) {
    if (option.key === 'adminToken') continue;
    t.same(parseConfig([], { [option.env]: '' })[option.key], defaults[option.key], `${option.env}= is unset`);
  }
  // `ADMIN_TOKEN=${{ secrets.MISSING }}` would start the control plane open while the job believes it protected
  t.throws(() => parseConfig([], { ADMIN_TOKEN: '' }), { name: 'ConfigError', message: 'ADMIN_TOKEN is set but empty: give it a value, or unset it' });
  // (a directory that exists: a --db in a missing directory is refused)
  t.equal(parseConfig([], { DB_PATH: path.join(tmpdir(), 'sandbox.db') }).db, path.join(tmpdir(), 'sandbox.db'));
});

t.test('a bad value throws ConfigError: one line naming the flag and what it accepts', async (t) => {
  for (const option of OPTIONS) {
    for (const raw of BAD[option.key]) {
      for (const [argv, env, label] of [
        [[`${option.flag}=${raw}`], {}, `${option.flag}=${raw}`],
        [[], { [option.env]: raw }, `${option.env}=${raw}`],
      ] as const) {
        if (raw === '' && label.startsWith(option.env)) continue; // an empty variable: its own message (above)
        let error: unknown;
        try {
          parseConfig(argv, env);
        } catch (caught) {
          error = caught;
        }
        t.type(error, ConfigError, label);
        const message = (error as Error).message;
        t.notMatch(message, /\n/, 'one line');
        t.match(message, option.flag, `names ${option.flag}`);
        t.match(message, option.env, `names ${option.env}`);
        t.match(message, /accepts/, 'says what is accepted');
      }
    }
  }
  // a flag missing its value does not take the next flag as its value
  t.throws(() => parseConfig(['--seed', '--port', '4503'], {}), { message: '--seed needs a value' });
  t.throws(() => parseConfig(['--admin-token', '--port', '4503'], {}), { message: '--admin-token needs a value' });
  t.throws(() => parseConfig(['--port', '--seed', 'x'], {}), { message: '--port needs a value' });
  t.throws(() => parseConfig(['--seed', '--db'], {}), { message: '--seed needs a value' });
  t.equal(parseConfig(['--seed=--db'], {}).seed, '--db', 'a value that starts with -- is given with =');
  t.throws(() => parseConfig(['--nope', '1'], {}), { message: /unknown option --nope; accepted: --port, --host/ });
  t.throws(() => parseConfig(['--port'], {}), { message: '--port needs a value' });
  t.throws(() => parseConfig(['5000'], {}), ConfigError, 'a bare value is not an option');
});

t.test('clockStart', async (t) => {
  t.same(clockStart(parseConfig([], {})), { mode: 'realtime' });
  t.same(clockStart(parseConfig(['--clock', 'realtime'], {})), { mode: 'realtime' });
  t.same(clockStart(parseConfig(['--clock', '2028-02-29T23:59:59.999Z'], {})), { mode: 'frozen', atMs: Date.parse('2028-02-29T23:59:59.999Z') }, 'a leap day');
  t.same(clockStart(parseConfig([], { CLOCK: '2026-12-31T23:59:59-05:00' })), { mode: 'frozen', atMs: Date.parse('2027-01-01T04:59:59.000Z') });
  t.same(clockStart(parseConfig(['--clock', '2026-03-01T12:00:00+01:00'], {})), { mode: 'frozen', atMs: Date.parse('2026-03-01T11:00:00.000Z') });
  // years as written, to the last millisecond of 9999 (docs/decisions.md#clock-range)
  t.same(clockStart(parseConfig(['--clock', '0000-02-29T00:00:00Z'], {})), { mode: 'frozen', atMs: Date.parse('0000-02-29T00:00:00Z') }, 'year 0 is a leap year');
  t.same(clockStart(parseConfig(['--clock', '0099-01-01T00:00:00Z'], {})), { mode: 'frozen', atMs: Date.parse('0099-01-01T00:00:00Z') }, 'not 1999');
  t.same(clockStart(parseConfig(['--clock', '9999-12-31T23:59:59.999Z'], {})), { mode: 'frozen', atMs: Date.parse('9999-12-31T23:59:59.999Z') });
});

// The built CLI, as `npm start` and the Docker image run it (the bundle, test/helpers/server-process.ts).
const CLI = SERVER_CLI;

t.test('the built CLI', async (t) => {
  await ensureBuilt();
  const scratch = mkdtempSync(path.join(tmpdir(), 'sandbox-config-'));
  const NOT_A_DATABASE = path.join(scratch, 'not-a-database.txt');
  writeFileSync(NOT_A_DATABASE, 'hello, I am not SQLite\n'.repeat(100));
  // docs/configuration.md: a --db file is checked before anything is written to it (WAL mode included)
  const OTHER_APP = path.join(scratch, 'other-app.db');
  const otherApp = new Database(OTHER_APP);
  otherApp.exec('CREATE TABLE foo (a); CREATE TABLE users (id TEXT); INSERT INTO foo VALUES (1)');
  otherApp.close();
  const LATER = path.join(scratch, 'later.db');
  const later = new Database(LATER);
  later.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  later.pragma('user_version = 999');
  later.close();
  const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
  const before = { other: digest(OTHER_APP), later: digest(LATER) };
  const FIFO = path.join(scratch, 'fixtures.fifo');
  execFileSync('mkfifo', [FIFO]);
  const busy = createNetServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const BUSY_PORT = (busy.address() as AddressInfo).port;
  t.teardown(() => {
    busy.close();
    rmSync(scratch, { recursive: true, force: true });
  });
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    spawnSync(...plainNode([CLI, ...args]), { encoding: 'utf8', env: { PATH: process.env.PATH, ...env }, timeout: 20_000 });

  for (const [args, env, expected] of [
    [['--port', 'abc'], {}, /--port \/ PORT "abc": accepts an integer port 0-65535/],
    [['--clock', 'noon'], {}, /--clock \/ CLOCK "noon": accepts "realtime" or an ISO 8601 instant/],
    [['--nope'], {}, /unknown option --nope/],
    [[], { LOG_LEVEL: 'loud' }, /--log-level \/ LOG_LEVEL "loud": accepts one of fatal, error/],
    [['--fixtures', '/nonexistent/fixtures.json'], {}, /--fixtures \/ FIXTURES: cannot read fixtures file \/nonexistent\/fixtures.json/],
    // start-up refuses what a flag's value makes impossible, flag or variable, with one line naming it
    [['--clock', '2026-02-30T00:00:00Z'], {}, /--clock \/ CLOCK "2026-02-30T00:00:00Z": accepts "realtime" or an ISO 8601 instant with a real calendar date/],
    [[], { CLOCK: '2026-13-01T00:00:00Z' }, /--clock \/ CLOCK "2026-13-01T00:00:00Z": accepts/],
    [[], { CLOCK: '2026-03-01T25:00:00Z' }, /--clock \/ CLOCK "2026-03-01T25:00:00Z": accepts/],
    [['--clock', '9999-12-31T23:59:59-01:00'], {}, /--clock \/ CLOCK "9999-12-31T23:59:59-01:00": accepts .*up to 9999-12-31T23:59:59.999Z/],
    [['--db', '/nonexistent-directory/sandbox.db'], {}, /--db \/ DB_PATH "\/nonexistent-directory\/sandbox.db": .*the directory does not exist/],
    [[], { DB_PATH: '/nonexistent-directory/sandbox.db' }, /--db \/ DB_PATH .*the directory does not exist/],
    [['--db', NOT_A_DATABASE, '--port', '0'], {}, /--db \/ DB_PATH ".*not-a-database.txt": cannot open the database \(file is not a database\)/],
    [['--host', 'no-such-host.invalid'], {}, /--host \/ HOST "no-such-host.invalid": accepts a host name or IP address that resolves/],
    [[], { HOST: 'no-such-host.invalid' }, /--host \/ HOST "no-such-host.invalid": accepts a host name or IP address that resolves/],
    [['--host', '192.0.2.1', '--port', '0'], {}, /--host \/ HOST "192.0.2.1": cannot listen, not an address of this machine/],
    [['--port', String(BUSY_PORT)], {}, new RegExp(`--port / PORT "${BUSY_PORT}": cannot listen, the address is in use`)],
    [['--webhook-url', 'ftp://x'], {}, /--webhook-url \/ WEBHOOK_URL "ftp:\/\/x": accepts/],
    [[], { JOURNAL_SIZE: '-5' }, /--journal-size \/ JOURNAL_SIZE "-5": accepts/],
    [['--port', '0x1196'], {}, /--port \/ PORT "0x1196": accepts an integer port 0-65535/],
    [[], { JOURNAL_SIZE: '1e5' }, /--journal-size \/ JOURNAL_SIZE "1e5": accepts/],
    [['--seed', '--port', '4503'], {}, /^service-sandbox: --seed needs a value$/m],
    [[], { ADMIN_TOKEN: '' }, /^service-sandbox: ADMIN_TOKEN is set but empty: give it a value, or unset it$/m],
    // the default fixtures hold a date of birth in 1985: a clock before it names --clock, not --fixtures
    [['--clock', '1980-01-01T00:00:00Z', '--port', '0'], {}, /^service-sandbox: invalid --clock \/ CLOCK "1980-01-01T00:00:00Z": the default fixtures cannot be seeded at that instant \(.*dateOfBirth 1985-04-12 is in the future \(today is 1980-01-01\)\); start the clock at a later instant, or give --fixtures of your own$/m],
    // docs/robustness.md#files-a-user-names: a device or a FIFO is refused at once, not read without end or waited on
    [['--fixtures', '/dev/zero', '--port', '0'], {}, /--fixtures \/ FIXTURES: cannot read fixtures file \/dev\/zero: it is a character device, not a regular file/],
    [['--fixtures', FIFO, '--port', '0'], {}, /--fixtures \/ FIXTURES: cannot read fixtures file .*fixtures\.fifo: it is a FIFO \(named pipe\), not a regular file/],
    [['--db', OTHER_APP, '--port', '0'], {}, /--db \/ DB_PATH ".*other-app\.db": cannot use this file: it is a SQLite database of something else \(tables foo, users\), not a sandbox's/],
    [['--db', LATER, '--port', '0'], {}, /--db \/ DB_PATH ".*later\.db": cannot use this file: its schema is version 999, later than this server's \d+ \(a later server wrote it/],
  ] as const) {
    const result = run([...args], env);
    t.equal(result.status, 2, `exit code 2 for ${args.join(' ') || JSON.stringify(env)}`);
    t.match(result.stderr, expected);
    t.equal(result.stderr.trim().split('\n').length, 1, 'one line');
    t.notMatch(result.stderr, /\n\s+at /, 'no stack trace');
    t.equal(result.stdout, '', 'nothing on stdout');
  }

  t.same({ other: digest(OTHER_APP), later: digest(LATER) }, before, 'the refused database files are byte for byte as they were (not even switched to WAL)');

  const help = run(['--help']);
  t.equal(help.status, 0);
  t.match(help.stdout, /service-sandbox sign METHOD TARGET/);
  // the variables it lists are the ones read (SESSION_POOL was listed after sessions lost their pool)
  const listed = /Every flag also reads an environment variable \(([^)]*)\)/.exec(help.stdout)![1]!.split(/,\s*/);
  t.same(listed, OPTIONS.map((option) => option.env), 'the help lists every variable, and only those');

  // `service-sandbox sign` prints curl -H arguments with a signature a server accepts
  // (docs/authentication.md#the-sign-helper)
  const signed = run(['sign', 'GET', '/v1/accounts?pageSize=2']);
  t.equal(signed.status, 0, signed.stderr);
  const headers = Object.fromEntries([...signed.stdout.matchAll(/-H (X-Service-[\w-]+):(\S+)/g)].map((m) => [m[1], m[2]]));
  t.match(headers, { 'X-Service-Api-Key': 'pk_sandbox_single', 'X-Service-Program-Id': 'prg_sandbox', 'X-Service-Timestamp': /^\d{13}$/ });
  t.equal(
    headers['X-Service-Signature'],
    signRequest({ apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', timestamp: headers['X-Service-Timestamp']!, method: 'GET', target: '/v1/accounts?pageSize=2' }),
  );
  const multi = run(['sign', 'POST', '/v1/auth/users', '--key', 'pk_sandbox_multi', '--body', '{"a":1}', '--format', 'json']);
  const multiHeaders = JSON.parse(multi.stdout);
  t.equal(
    multiHeaders['X-Service-Signature'],
    signRequest({ apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret', timestamp: multiHeaders['X-Service-Timestamp'], method: 'POST', target: '/v1/auth/users', body: '{"a":1}' }),
  );
  t.equal(run(['sign', 'GET']).status, 2, 'sign without a target is a usage error');
  // a key of the fixtures file brings its own secret and programme
  const other = JSON.parse(run(['sign', 'GET', '/v1/accounts', '--key', 'pk_other_multi', '--user', 'usr_other', '--format', 'json']).stdout);
  t.equal(other['X-Service-Program-Id'], 'prg_other');
  t.equal(
    other['X-Service-Signature'],
    signRequest({ apiKey: 'pk_other_multi', secret: 'sk_other_multi_secret', timestamp: other['X-Service-Timestamp'], method: 'GET', target: '/v1/accounts' }),
  );
  const unknownKey = run(['sign', 'GET', '/v1/accounts', '--key', 'pk_not_in_fixtures']);
  t.equal(unknownKey.status, 2, 'an unknown key without --secret is a usage error');
  t.match(unknownKey.stderr, /--secret/);
});

t.test('the built CLI serves, and stops on SIGTERM', async (t) => {
  await ensureBuilt();
  const child = spawn(...plainNode([CLI, '--port', '0', '--log-level', 'silent', '--clock', '2026-03-01T12:00:00.000Z']), {
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no listening line: ${out}`)), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  const health = await fetch(`${url}/_emulator/health`);
  t.equal(health.status, 200);
  t.match(await health.json(), { status: 'ok', now: '2026-03-01T12:00:00.000Z' }, '--clock starts frozen');
  t.equal((await fetch(`${url}/v1/accounts`)).status, 401, 'unsigned interface calls are refused');
  // what the bundle loads from node_modules on first use (scripts/bundle.mjs): Swagger UI with its files,
  // the injector that forwards to it, and yaml
  const yaml = await fetch(`${url}/docs/yaml`);
  t.equal(yaml.status, 200);
  t.match(await yaml.text(), /^openapi: 3\.1\.0/);
  const css = await fetch(`${url}/docs/static/swagger-ui.css`);
  t.equal(css.status, 200);
  t.ok((await css.arrayBuffer()).byteLength > 10_000, 'the UI\'s stylesheet');
  const bad = await fetch(`${url}/v1/transactions?pageSize=abc`, { headers: signRequestHeaders('/v1/transactions?pageSize=abc') });
  t.equal(bad.status, 400);
  const badBody = (await bad.json()) as Record<string, unknown>;
  t.match(badBody, { validationErrors: [{ fieldRef: 'pageSize' }] }, 'zod messages in the bundle');
  t.notOk('errorCode' in badBody, 'no errorCode (interface 7.1)');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'clean exit on SIGTERM');
});

/** HMAC headers of the fixtures' SINGLE_USER key for a GET (docs/authentication.md). */
function signRequestHeaders(target: string): Record<string, string> {
  const timestamp = String(Date.now());
  return {
    'x-service-api-key': 'pk_sandbox_single',
    'x-service-program-id': 'prg_sandbox',
    'x-service-timestamp': timestamp,
    'x-service-signature': signRequest({ apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', timestamp, method: 'GET', target }),
  };
}
