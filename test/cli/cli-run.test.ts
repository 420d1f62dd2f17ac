import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { CLI, ensureBuilt, startServerProcess } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';

// `service-sandbox run` from the built CLI (docs/cli.md#run): exit 0 when every step passed, 1 at the first failed
// one with file:line:column, the request and the answer, 2 for bad arguments or a bad file before anything is sent;
// --junit parsed back by a real XML parser against the structure Jenkins and GitLab read; --json; --session with --url.

const dir = mkdtempSync(path.join(tmpdir(), 'scenario-run-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    for (const name of ['ADMIN_TOKEN', 'NODE_OPTIONS', 'FIXTURES', 'SEED', 'CLOCK']) delete env[name];
    const child = spawn(...plainNode([CLI, 'run', ...args]), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const PASSING = `name: passing
seed: "cli-run"
clock: 2026-03-01T12:00:00Z
webhooks: { receiver: true }
given:
  users:
    - as: northwind
      type: BUSINESS
      name: Northwind Traders Inc
      accounts:
        - { as: usd, currency: USD, balance: "250.00" }
      depositInstructions:
        - { as: ach, account: usd, rail: US.USD.ACH }
steps:
  - id: deposit
    caption: A customer pays 100.00 USD
    request:
      method: POST
      path: "/v1/sandbox/accounts/\${usd.id}/deposits"
      as: northwind
      body: { depositInstructionId: "\${ach.id}", amount: "100.00", counterpartyName: Contoso, reference: NW-1 }
    expect: { status: 202 }
  - advance: 2s
  - waitFor: { events: [transaction_created, transaction_status_updated], transaction: "\${steps.deposit.transactionId}" }
  - expect:
      balance: { account: usd, available: "350.00" }
`;

const FAILING = `name: failing
steps:
  - request: { method: GET, path: /v1/users, as: programme }
    expect:
      status: 200
      body:
        totalRecords: { gt: 1000 }
  - settle: true
`;

t.before(async () => {
  await ensureBuilt();
});

t.test('exit 0: one line per step, the JUnit report valid and shaped as Jenkins and GitLab read it', async (t) => {
  const file = write('passing.yaml', PASSING);
  const junit = path.join(dir, 'passing.xml');
  const result = await run([file, '--junit', junit]);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /^run .*passing\.yaml \(passing\) in session ses_[0-9a-f]{16}\n/);
  t.match(result.stdout, /\n {2}ok {3}1\/4 request POST \/v1\/sandbox\/accounts\/acct_\w+\/deposits -> 202 {2}\(deposit: A customer pays 100\.00 USD\)/);
  t.match(result.stdout, /\nall 1 scenario passed\n$/);
  const xml = readFileSync(junit, 'utf8');
  t.equal(XMLValidator.validate(xml), true);
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'testsuite' || name === 'testcase' }).parse(xml);
  t.match(parsed.testsuites, { name: 'service-sandbox run', tests: '4', failures: '0', time: /^\d+\.\d{3}$/ });
  const suite = parsed.testsuites.testsuite[0];
  t.match(suite, { name: 'passing', tests: '4', failures: '0', skipped: '0', time: /^\d+\.\d{3}$/, file });
  t.same(
    suite.testcase.map((item: { name: string; classname: string }) => [item.name, item.classname]),
    [
      ['1 deposit A customer pays 100.00 USD', 'passing'],
      ['2', 'passing'],
      ['3', 'passing'],
      ['4', 'passing'],
    ],
  );
});

t.test('exit 1: the failed step with file:line:column, its request and answer; later files do not run', async (t) => {
  const failing = write('failing.yaml', FAILING);
  const passing = write('passing2.yaml', PASSING);
  const junit = path.join(dir, 'failing.xml');
  const result = await run([failing, passing, '--junit', junit]);
  t.equal(result.code, 1);
  t.match(result.stdout, / {2}FAIL 1\/2 request GET \/v1\/users -> 200/);
  t.notMatch(result.stdout, /passing2/);
  const lines = result.stderr.split('\n');
  t.match(lines[0], new RegExp(`^${failing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:7:9: body\\.totalRecords: expected a number gt 1000, found \\d+$`));
  t.equal(lines[1], '    step 1');
  t.equal(lines[2], '    request: GET /v1/users');
  t.match(lines[3], /^ {4}answer: 200 \{"data":\[/);
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'testsuite' || name === 'testcase' }).parse(readFileSync(junit, 'utf8'));
  t.match(parsed.testsuites, { tests: '6', failures: '1', skipped: '5' });
  const [first, second] = parsed.testsuites.testsuite;
  t.match(first.testcase[0].failure, { message: /^body\.totalRecords: expected a number gt 1000, found \d+$/, type: 'expectation' });
  t.ok('skipped' in first.testcase[1]);
  t.match(second, { name: 'passing', tests: '4', skipped: '4' });
});

t.test('captions and answers are printed with their control characters escaped; --json stays the same JSON', async (t) => {
  // a caption that would clear the screen, retitle the window and write an 8-bit CSI, and a failing expectation
  const file = write(
    'escapes.yaml',
    `name: escapes
steps:
  - caption: "clear\\e[2J\\e]0;owned\\a here\\u009b1m"
    request: { method: GET, path: /v1/users, as: programme }
    expect: { status: 201 }
`,
  );
  const result = await run([file]);
  t.equal(result.code, 1);
  for (const [name, text] of [['stdout', result.stdout], ['stderr', result.stderr]] as const) {
    t.notMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, `${name}: no control character but line breaks`);
  }
  t.match(result.stdout, 'clear\\u001b[2J\\u001b]0;owned\\u0007 here\\u009b1m', 'the caption, escaped');
  t.match(result.stderr, /step 1: clear\\u001b\[2J/, 'on the failure lines too');
  const asJson = await run([file, '--json']);
  t.equal(asJson.code, 1);
  const report = JSON.parse(asJson.stdout);
  t.equal(report.files[0].steps[0].caption, 'clear\u001b[2J\u001b]0;owned\u0007 here\u009b1m', '--json: the same caption once parsed');
});

t.test('exit 2: bad arguments and bad files, before anything is sent', async (t) => {
  const fifo = path.join(dir, 'fifo.yaml');
  execFileSync('mkfifo', [fifo]);
  const broken = write('broken.yaml', 'name: broken\nsteps:\n  - settle: true\n    bogus: 1\n');
  const noKey = write(
    'readonly.yaml',
    `name: readonly\nfixtures: ${JSON.stringify(path.join(import.meta.dirname, '..', '..', 'fixtures', 'default.json'))}\nsteps:\n  - request: { method: POST, path: /v1/beneficiaries, as: { key: pk_sandbox_readonly, user: usr_acme }, body: {} }\n`,
  );
  const cases: Array<[string[], RegExp]> = [
    [[], /^service-sandbox run: no scenario file given; usage: service-sandbox run FILE\.\.\./],
    [[broken, '--bogus'], /^service-sandbox run: unknown option --bogus/],
    [[broken, '--url', 'ftp://x'], /^service-sandbox run: --url "ftp:\/\/x": accepts an http:\/\/ or https:\/\/ URL/],
    [[broken, '--session'], /^service-sandbox run: --session keeps each file's session on the server at --url/],
    [[broken], /broken\.yaml:4:5: unknown field "bogus" \(allowed here: id, caption/],
    [[path.join(dir, 'missing.yaml')], /missing\.yaml:1:1: cannot read the file: ENOENT/],
    // docs/robustness.md#files-a-user-names: not a regular file is refused as a missing one is, without reading it
    [[dir], /scenario-run-\w+:1:1: cannot read the file: it is a directory, not a regular file/],
    [[fifo], /fifo\.yaml:1:1: cannot read the file: it is a FIFO \(named pipe\), not a regular file/],
    [['/dev/zero'], /^\/dev\/zero:1:1: cannot read the file: it is a character device, not a regular file/],
    [[write('big.yaml', `name: big\n# ${'x'.repeat(1024 * 1024)}\nsteps:\n  - settle: true\n`)], /big\.yaml:1:1: the file is larger than 1 MiB, the most it may be/],
    [[write('fixtures-fifo.yaml', `name: ff\nfixtures: fifo.yaml\nsteps:\n  - settle: true\n`)], /fixtures-fifo\.yaml:1:1: cannot read fixtures fifo\.yaml: it is a FIFO/],
    [[noKey], /readonly\.yaml:4:\d+: the key pk_sandbox_readonly may not call POST \/v1\/beneficiaries: it needs the beneficiaries:write entitlement/],
    [[write('unreachable.yaml', FAILING), '--url', 'http://127.0.0.1:9'], /unreachable\.yaml:1:1: POST http:\/\/127\.0\.0\.1:9\/_emulator\/sessions failed/],
  ];
  for (const [args, message] of cases) {
    const result = await run(args);
    t.equal(result.code, 2, args.join(' '));
    t.match(result.stderr, message, args.join(' '));
    t.equal(result.stdout, '', 'nothing ran');
    t.notMatch(result.stderr, /\n\s+at /, 'no stack trace');
  }
});

// docs/cli.md#run: `--junit scenarios/*.yaml` made the first scenario the report's path and overwrote it. Each bad --junit
// is exit 2 before anything runs (a server at --url that cannot be reached proves nothing was sent: that would be exit
// 2 with a different message), and every scenario file is left byte for byte.
t.test('--junit: never a scenario file, a directory or a path in no directory; checked before anything runs', async (t) => {
  const scenarios = path.join(dir, 'junit-scenarios');
  mkdirSync(scenarios);
  const a = path.join(scenarios, 'a.yaml');
  const b = path.join(scenarios, 'b.yaml');
  writeFileSync(a, FAILING);
  writeFileSync(b, FAILING);
  const link = path.join(scenarios, 'report-link.xml');
  symlinkSync(b, link);
  const unreachable = ['--url', 'http://127.0.0.1:9'];
  const cases: Array<[string[], RegExp]> = [
    [['--junit', a, b, ...unreachable], /--junit .*a\.yaml: a JUnit report is XML; this is the name of a scenario file \(did the shell expand --junit scenarios\/\*\.yaml\?\)/],
    [[b, '--junit', link, ...unreachable], /--junit .*report-link\.xml: is the scenario file .*b\.yaml; the report would replace it/],
    [[b, '--junit', scenarios, ...unreachable], /--junit .*junit-scenarios: is a directory/],
    [[b, '--junit', path.join(dir, 'no-such-dir', 'r.xml'), ...unreachable], /--junit .*r\.xml: its directory .*no-such-dir does not exist/],
    [[b, '--junit', '/dev/null', ...unreachable], /--junit \/dev\/null: is not a regular file/],
  ];
  for (const [args, message] of cases) {
    const result = await run(args);
    t.equal(result.code, 2, args.join(' '));
    t.match(result.stderr, new RegExp(`^service-sandbox run: ${message.source}`), args.join(' '));
    t.equal(result.stderr.trim().split('\n').length, 1, 'one line');
    t.equal(result.stdout, '', 'nothing ran');
  }
  t.equal(readFileSync(a, 'utf8'), FAILING, 'a.yaml untouched');
  t.equal(readFileSync(b, 'utf8'), FAILING, 'b.yaml untouched');

  // a good path: the report replaces the old one whole, through a file beside it that does not stay
  const report = path.join(scenarios, 'report.xml');
  writeFileSync(report, 'the previous report');
  const result = await run([b, '--junit', report]);
  t.equal(result.code, 1, 'the scenario fails, the report is written');
  t.match(readFileSync(report, 'utf8'), /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites /);
  t.same(readdirSync(scenarios).sort(), ['a.yaml', 'b.yaml', 'report-link.xml', 'report.xml'], 'no temporary file left');
});

t.test('--url and --session: the session is kept and its baseUrl printed; --json is one document', async (t) => {
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.stop());
  const file = write('kept.yaml', PASSING);
  const result = await run([file, '--url', server.url, '--session']);
  t.equal(result.code, 0, result.stderr);
  const kept = /session (ses_[0-9a-f]{16}) kept: (http:\/\/\S+)/.exec(result.stdout);
  t.ok(kept, result.stdout);
  const sessions = (await (await fetch(`${server.url}/_emulator/sessions`)).json()) as { data: Array<{ id: string; baseUrl: string }> };
  t.ok(sessions.data.some((session) => session.id === kept![1] && session.baseUrl === kept![2]), 'the session lives on');
  const json = await run([file, '--url', server.url, '--json']);
  t.equal(json.code, 0, json.stderr);
  const document = JSON.parse(json.stdout);
  t.match(document, { passed: true, files: [{ name: 'passing', ran: true, passed: true, session: { id: /^ses_/, kept: false } }] });
  t.equal(document.files[0].steps.length, 4);
  t.match(document.files[0].given, { northwind: /^usr_/, usd: /^acct_/, ach: /^di_/ });
  const after = (await (await fetch(`${server.url}/_emulator/sessions`)).json()) as { data: Array<{ id: string }> };
  t.notOk(after.data.some((session) => session.id === document.files[0].session.id), 'without --session the session is ended');
});

// docs/scenarios.md#paths: `run` sends each call to the session's baseUrl with fetch, whose URL parser resolves dot
// segments; a path written with them is a bad file (exit 2, nothing sent), one a reference fills in with them fails its
// step (exit 1) unsent. The server's root clock and its other sessions are as they were.
t.test('a file cannot reach the root or another session through dot segments', async (t) => {
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.stop());
  const control = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${server.url}${route}`, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
    return (await response.json()) as Record<string, unknown> & { data: unknown[] };
  };
  await control('POST', '/_emulator/clock', { freezeAt: '2099-03-01T12:00:00Z' }); // frozen ahead: the root clock never goes back
  await control('POST', '/_emulator/sessions', { label: 'victim' });

  const written = write('escape-written.yaml', 'name: escape-written\nsteps:\n  - control: { method: POST, path: "/_emulator/../../../_emulator/clock", body: { advanceMs: 5000 } }\n');
  const refused = await run([written, '--url', server.url]);
  t.equal(refused.code, 2, refused.stderr);
  t.match(refused.stderr, /escape-written\.yaml:3:36: path is not normalized: it has dot segments/);
  t.equal(refused.stdout, '', 'nothing ran');

  const seeded = (value: string, action: string) =>
    `name: escape-filled\nclock: 2026-03-01T12:00:00Z\nsteps:\n  - fault: { match: { path: /v1/never }, effect: { type: status, status: 503 }, seed: "${value}" }\n    capture: { up: body.seed }\n  - ${action}\n`;
  const files: Array<[string, string, RegExp]> = [
    ['escape-clock.yaml', seeded('../../../_emulator/clock', 'control: { method: POST, path: "/_emulator/${up}", body: { advanceMs: 5000 } }'), /POST \/_emulator\/\.\.\/\.\.\/\.\.\/_emulator\/clock was not sent: the path is not normalized/],
    ['escape-sessions.yaml', seeded('../../../_emulator/sessions?label=victim', 'control: { method: DELETE, path: "/_emulator/${up}" }'), /DELETE \/_emulator\/\.\.\/\.\.\/\.\.\/_emulator\/sessions\?label=victim was not sent/],
    ['escape-request.yaml', seeded('../../_emulator/clock', 'request: { method: POST, path: "/v1/${up}", body: { advanceMs: 5000 } }'), /POST \/v1\/\.\.\/\.\.\/_emulator\/clock was not sent/],
  ];
  for (const [name, text, message] of files) {
    const result = await run([write(name, text), '--url', server.url]);
    t.equal(result.code, 1, `${name}: the step failed: ${result.stderr}`);
    t.match(result.stdout + result.stderr, message, `${name}: the call was not sent`);
    t.match(result.stdout + result.stderr, new RegExp(`${name.replace('.', '\\.')}:6:5:`), `${name}: at the step's action`);
  }

  t.equal((await control('GET', '/_emulator/clock')).now, '2099-03-01T12:00:00.000Z', 'the root clock did not move');
  t.equal((await control('GET', '/_emulator/sessions?label=victim')).data.length, 1, 'the other session lives on');
});
