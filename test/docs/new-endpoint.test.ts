import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';

// `npm run new:endpoint` (scripts/new-endpoint.mjs, docs/architecture.md#where-new-code-goes): the owner rule for nested
// paths and the files it plans, without writing any.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
interface Plan {
  files: Record<string, string>;
  descriptor: string;
  routeVar: string;
}
const scaffold = () =>
  import(pathToFileURL(path.join(ROOT, 'scripts', 'new-endpoint.mjs')).href) as Promise<{
    ownerOf(route: string, domains: string[]): string | undefined;
    plan(options: Record<string, string>): Plan;
    partWithoutArea(part: string, area: string): string;
    withoutVerb(part: string): string;
    schemaIdOf(operationId: string): string;
    docsPageOf(root: string, route: string): string | undefined;
    wireInto(text: string, result: { descriptor: string; routeVar: string; importLine: string; owner: string }): string;
  }>;

t.test('a /v1 path belongs to the domain of the last resource it names', async (t) => {
  const { ownerOf } = await scaffold();
  const domains = ['accounts', 'transactions', 'statements', 'sandbox', 'beneficiaries', 'intents', 'deposit-instructions'];
  t.equal(ownerOf('/v1/accounts/{accountId}/transactions', domains), 'transactions');
  t.equal(ownerOf('/v1/accounts/{accountId}/deposit-instructions', domains), 'deposit-instructions');
  t.equal(ownerOf('/v1/accounts/{accountId}/statement', domains), 'statements');
  t.equal(ownerOf('/v1/accounts/{accountId}/widgets', domains), 'accounts', 'no domain named after the last segment: its parent');
  t.equal(ownerOf('/v1/sandbox/accounts/{accountId}/deposits', domains), 'sandbox');
  t.equal(ownerOf('/v1/beneficiaries/{beneficiaryId}/instruments', domains), 'beneficiaries');
});

t.test('the planned files: schema, service, route and test beside the owner, wired into its descriptor', async (t) => {
  const { plan } = await scaffold();
  const v1 = plan({ method: 'GET', path: '/v1/accounts/{accountId}/widgets', operationId: 'listAccountWidgets', root: ROOT });
  t.same(Object.keys(v1.files).sort(), [
    'src/domains/accounts/accounts.widgets.routes.ts',
    'src/domains/accounts/accounts.widgets.schema.ts',
    'src/domains/accounts/accounts.widgets.service.ts',
    'test/domains/accounts/accounts.widgets.test.ts',
  ]);
  t.equal(v1.descriptor, 'src/domains/accounts/accounts.domain.ts');
  t.match(v1.files['src/domains/accounts/accounts.widgets.routes.ts'], /operationId: 'listAccountWidgets'/);
  const control = plan({ method: 'POST', path: '/_emulator/clock/nudge', operationId: 'emulatorNudgeClock', area: 'clock', root: ROOT });
  t.equal(control.descriptor, 'src/emulator/emulator.domain.ts');
  t.match(control.files['src/emulator/clock.nudge.routes.ts'], /config: CONTROL_PLANE/);
  t.throws(() => plan({ method: 'GET', path: '/_emulator/x', operationId: 'getX', root: ROOT }), /starts with emulator/);
});

t.test('names the scaffold proposes: the part without its area, a schema id without the verb', async (t) => {
  const { partWithoutArea, schemaIdOf, withoutVerb } = await scaffold();
  t.equal(partWithoutArea('jobs-summary', 'jobs'), 'summary');
  t.equal(partWithoutArea('nudge-clock', 'clock'), 'nudge');
  t.equal(partWithoutArea('account-widgets', 'accounts'), 'widgets', 'the area named in the singular');
  t.equal(partWithoutArea('jobs', 'jobs'), 'jobs', 'nothing left: the name stays');
  t.equal(partWithoutArea('run-demo-step', 'jobs'), 'run-demo-step');
  t.equal(partWithoutArea(withoutVerb('get-beneficiary-summary'), 'beneficiaries'), 'summary', 'a /v1 part loses its verb and its domain too');
  t.equal(withoutVerb('list-account-widgets'), 'account-widgets');
  t.equal(withoutVerb('get'), 'get', 'a verb alone stays');
  t.equal(schemaIdOf('getAccountBalanceSummary'), 'AccountBalanceSummary');
  t.equal(schemaIdOf('emulatorJobsSummary'), 'JobsSummary', 'a control-plane id keeps the plain name');
  t.equal(schemaIdOf('listAccountWidgets'), 'AccountWidgets');
  t.equal(schemaIdOf('getaway'), 'Getaway', 'a verb only when a word follows');
});

t.test('what the planned files hold: a strict query on control-plane reads, shared path parameters, fixture ids', async (t) => {
  const { plan } = await scaffold();
  const read = plan({ method: 'GET', path: '/_emulator/jobs/summary', operationId: 'emulatorJobsSummary', area: 'jobs', root: ROOT });
  t.same(Object.keys(read.files).sort(), ['src/emulator/jobs.summary.routes.ts', 'src/emulator/jobs.summary.schema.ts', 'src/emulator/jobs.summary.service.ts', 'test/emulator/jobs.summary.test.ts']);
  t.match(read.files['src/emulator/jobs.summary.routes.ts'], /querystring: z\.strictObject\(\{\}\)/, 'an unknown query parameter is a 400');
  t.match(read.files['src/emulator/jobs.summary.schema.ts'], /id: 'JobsSummary'/);
  const nudge = plan({ method: 'POST', path: '/_emulator/clock/nudge', operationId: 'emulatorNudgeClock', area: 'clock', root: ROOT });
  t.notMatch(nudge.files['src/emulator/clock.nudge.routes.ts'], /querystring/, 'a write has a body, not a strict query');
  const nested = plan({ method: 'GET', path: '/v1/accounts/{accountId}/balance-summary', operationId: 'getAccountBalanceSummary', root: ROOT });
  const schema = nested.files['src/domains/accounts/accounts.balance-summary.schema.ts']!;
  t.match(schema, /import \{ accountParams \} from '\.\/accounts\.schema\.js'/, 'the account id the accounts domain defines, imported');
  t.match(schema, /getAccountBalanceSummaryParams = accountParams/);
  t.match(nested.files['test/domains/accounts/accounts.balance-summary.test.ts'], /\/v1\/accounts\/acct_acme_usd\/balance-summary/, 'a fixture id');
  t.match(nested.files['src/domains/accounts/accounts.balance-summary.routes.ts'], /errorResponses\(403, 404\)/, 'a /v1 read answers 403 (scope, another user\'s) and 404');
  t.match(read.files['src/emulator/jobs.summary.routes.ts'], /errorResponses\(\)/, 'the control plane has no user to refuse');
  const control = plan({ method: 'GET', path: '/_emulator/accounts/{accountId}/notes', operationId: 'emulatorAccountNotes', area: 'accounts', root: ROOT });
  t.match(control.files['src/emulator/accounts.notes.schema.ts'], /from '\.\.\/domains\/accounts\/accounts\.schema\.js'/, 'imported from the domain on the control plane too');
});

t.test('wiring: after the area\'s own plugin (the document\'s order), else at the end; the docs page of an area', async (t) => {
  const { wireInto, docsPageOf } = await scaffold();
  const descriptor = [
    "import { clockRoutes } from './clock.routes.js';",
    "import { emulatorJobsRoutes } from './jobs.routes.js';",
    "import { demoRoutes } from './demo.routes.js';",
    'export const d = {',
    '  routes: [',
    '    clockRoutes,',
    '    emulatorJobsRoutes,',
    '    demoRoutes,',
    '  ],',
    '};',
  ].join('\n');
  const result = { descriptor: 'emulator.domain.ts', routeVar: 'emulatorJobsSummaryRoutes', importLine: "import { emulatorJobsSummaryRoutes } from './jobs.summary.routes.js';", owner: 'jobs' };
  const wired = wireInto(descriptor, result);
  t.match(wired, /emulatorJobsRoutes,\n    emulatorJobsSummaryRoutes,\n    demoRoutes,/, 'next to its area');
  t.match(wired, /import \{ emulatorJobsSummaryRoutes \} from '\.\/jobs\.summary\.routes\.js';/);
  t.equal(wireInto(wired, result), wired, 'wiring twice changes nothing');
  const elsewhere = wireInto(descriptor, { ...result, owner: 'widgets', routeVar: 'widgetsRoutes' });
  t.match(elsewhere, /demoRoutes,\n    widgetsRoutes,\n  \]/, 'no plugin of its area: at the end');
  t.equal(docsPageOf(ROOT, '/v1/accounts/{accountId}/balance-summary'), 'docs/money-in.md', 'accounts are on the money-in page');
  t.equal(docsPageOf(ROOT, '/v1/beneficiaries'), 'docs/money-out.md');
});
