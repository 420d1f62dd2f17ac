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
    'src/domains/accounts/accounts.list-account-widgets.routes.ts',
    'src/domains/accounts/accounts.list-account-widgets.schema.ts',
    'src/domains/accounts/accounts.list-account-widgets.service.ts',
    'test/domains/accounts/accounts.list-account-widgets.test.ts',
  ]);
  t.equal(v1.descriptor, 'src/domains/accounts/accounts.domain.ts');
  t.match(v1.files['src/domains/accounts/accounts.list-account-widgets.routes.ts'], /operationId: 'listAccountWidgets'/);
  const control = plan({ method: 'POST', path: '/_emulator/clock/nudge', operationId: 'emulatorNudgeClock', area: 'clock', root: ROOT });
  t.equal(control.descriptor, 'src/emulator/emulator.domain.ts');
  t.match(control.files['src/emulator/clock.nudge-clock.routes.ts'], /config: CONTROL_PLANE/);
  t.throws(() => plan({ method: 'GET', path: '/_emulator/x', operationId: 'getX', root: ROOT }), /starts with emulator/);
});
