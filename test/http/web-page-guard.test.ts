import t from 'tap';
import { buildTestApp, json, type TestApp } from '../helper.js';
import { hostNameOf, isAllowedHost } from '../../src/http/web-page-guard.js';

// docs/robustness.md#web-pages: a page of another origin may not change the sandbox, and a request must name this
// server by a name a DNS-rebinding page cannot use.

const clockNow = async (sandbox: TestApp, prefix = '') => json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/clock` })).now as string;
const advance = (sandbox: TestApp, prefix = '') =>
  sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/clock`, payload: { advanceMs: 60_000 }, headers: { host: '127.0.0.1:4010' } });

t.test('a Host that names another domain is refused on every route, before anything runs', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const before = await clockNow(sandbox);
  for (const [method, url] of [['GET', '/v1/accounts'], ['GET', '/_emulator/health'], ['GET', '/_emulator/ui'], ['POST', '/_emulator/reset'], ['GET', '/docs'], ['GET', '/no/such/route']] as const) {
    const answer = await sandbox.app.inject({ method, url, headers: { host: 'rebound.attacker.example:4010' } });
    t.equal(answer.statusCode, 403, `${method} ${url}`);
    t.match(json(answer), {
      errorCode: 'FORBIDDEN',
      message: /^Host rebound\.attacker\.example is not a name this server answers to: .*--allowed-hosts rebound\.attacker\.example \(ALLOWED_HOSTS\)/,
    });
  }
  t.equal(await clockNow(sandbox), before, 'nothing changed');
  const session = json(await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: {} }));
  const refused = await sandbox.app.inject({ method: 'GET', url: `/_sessions/${session.id}/_emulator/health`, headers: { host: 'evil.test' } });
  t.equal(refused.statusCode, 403, 'a session path too');
});

t.test('the names a server is reached by are taken: IP addresses, localhost, single labels, container hosts, --host', async (t) => {
  const sandbox = await buildTestApp({ config: { host: 'sandbox.internal.test' } });
  t.teardown(sandbox.close);
  for (const host of ['127.0.0.1:4010', '10.1.2.3', '[::1]:4010', '[fe80::1]', 'localhost:4010', 'LOCALHOST', 'localhost.', 'api.localhost:4010', 'sandbox:4010', 'service-sandbox', 'host.docker.internal:4010', 'host.containers.internal', 'sandbox.internal.test:4010']) {
    const answer = await sandbox.app.inject({ method: 'GET', url: '/_emulator/health', headers: { host } });
    t.equal(answer.statusCode, 200, host);
  }
});

t.test('--allowed-hosts adds names: exact, every name under a leading dot, or * for any', async (t) => {
  t.ok(isAllowedHost('api.example.com', { host: '127.0.0.1', allowedHosts: ['api.example.com'] }));
  t.notOk(isAllowedHost('www.example.com', { host: '127.0.0.1', allowedHosts: ['api.example.com'] }));
  t.ok(isAllowedHost('a.b.corp.test', { host: '127.0.0.1', allowedHosts: ['.corp.test'] }));
  t.ok(isAllowedHost('corp.test', { host: '127.0.0.1', allowedHosts: ['.corp.test'] }));
  t.notOk(isAllowedHost('evilcorp.test', { host: '127.0.0.1', allowedHosts: ['.corp.test'] }), 'a suffix only at a dot');
  t.ok(isAllowedHost('anything.example', { host: '127.0.0.1', allowedHosts: ['*'] }));
  t.notOk(isAllowedHost('example.com', { host: '0.0.0.0', allowedHosts: [] }), 'binding every interface takes no name by itself');
  t.equal(hostNameOf('[::1]:4010'), '[::1]');
  t.equal(hostNameOf('Example.COM.:80'), 'example.com');

  const sandbox = await buildTestApp({ config: { allowedHosts: ['sandbox.example.com'] } });
  t.teardown(sandbox.close);
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/health', headers: { host: 'sandbox.example.com:4010' } })).statusCode, 200);
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/health', headers: { host: 'other.example.com' } })).statusCode, 403);
});

t.test('a control-plane change sent by a page of another origin is refused; the same origin and other clients are not', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  // a frozen clock, so its `now` moves only with a change
  const session = json(await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { clock: '2026-03-01T12:00:00.000Z' } }));
  const prefix = `/_sessions/${session.id}`;
  t.equal((await advance(sandbox)).statusCode, 200);
  t.equal((await advance(sandbox, prefix)).statusCode, 200);
  const rootBefore = await clockNow(sandbox);
  const sessionBefore = await clockNow(sandbox, prefix);

  const foreign: Array<[string, Record<string, string>]> = [
    ['another origin', { origin: 'https://evil.example' }],
    ['another port of the same host', { origin: 'http://127.0.0.1:3000' }],
    ['an opaque origin (a sandboxed frame, a file)', { origin: 'null' }],
    ['no Origin, Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['no Origin, Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }],
  ];
  for (const [label, headers] of foreign) {
    for (const [method, url, payload] of [
      ['POST', '/_emulator/reset', undefined],
      ['POST', `${prefix}/_emulator/reset`, undefined],
      ['POST', '/_emulator/sessions', undefined],
      ['DELETE', `/_emulator/sessions/${session.id}`, undefined],
      ['POST', '/_emulator/enrollment/usr_jane/revoke', 'x=1'],
    ] as const) {
      const answer = await sandbox.app.inject({ method, url, payload, headers: { host: '127.0.0.1:4010', 'content-type': 'text/plain', ...headers } });
      t.equal(answer.statusCode, 403, `${label}: ${method} ${url}`);
      t.match(json(answer), { errorCode: 'FORBIDDEN', message: /^A web page of another origin \(.+\) may not change this sandbox/ }, label);
    }
  }
  t.equal(await clockNow(sandbox), rootBefore, 'the root was not reset');
  t.equal(await clockNow(sandbox, prefix), sessionBefore, 'nor the session, which still exists');
  t.equal(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/sessions' })).data.length, 1, 'no session created or ended');

  // reads sent by a foreign page are refused too (the listen relay's and the streams' GETs change state)
  const read = await sandbox.app.inject({ method: 'GET', url: '/_emulator/clock', headers: { host: '127.0.0.1:4010', origin: 'https://evil.example' } });
  t.equal(read.statusCode, 403);
  t.notOk(read.headers['access-control-allow-origin'], 'no CORS header');
  // the dashboard's own page, and clients that are not browsers
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset', headers: { host: '127.0.0.1:4010', origin: 'http://127.0.0.1:4010', 'sec-fetch-site': 'same-origin' } })).statusCode, 200);
  t.equal((await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/reset`, headers: { host: 'localhost:8080', origin: 'http://LOCALHOST:8080' } })).statusCode, 200, 'through a port mapping');
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset', headers: { host: '127.0.0.1:4010' } })).statusCode, 200, 'no Origin: curl, the kits');
});

t.test('the route the router matched is judged: an encoded /_emulator is the control plane too', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const session = json(await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { clock: '2026-03-01T12:00:00.000Z' } }));
  t.equal((await advance(sandbox)).statusCode, 200);
  const before = await clockNow(sandbox);
  for (const url of ['/%5Femulator/reset', '/_%65mulator/reset', `/_sessions/${session.id}/%5Femulator/reset`]) {
    const answer = await sandbox.app.inject({ method: 'POST', url, headers: { host: '127.0.0.1:4010', origin: 'https://evil.example', 'content-type': 'text/plain' } });
    t.equal(answer.statusCode, 403, url);
  }
  t.equal(await clockNow(sandbox), before, 'not reset');
});

t.test('no page of another origin may send a control-plane GET but a followed link to a page that changes nothing', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const endpoints = async () => json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/endpoint' }));
  const before = await endpoints();
  const cross = { host: '127.0.0.1:4010', 'sec-fetch-site': 'cross-site' };
  // an <img> or a link to the listen relay's stream would re-point every webhook endpoint
  for (const mode of ['no-cors', 'navigate', 'cors']) {
    const answer = await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/listen/stream?forwardTo=http://attacker.example/hooks', headers: { ...cross, 'sec-fetch-mode': mode } });
    t.equal(answer.statusCode, 403, `the listen stream, ${mode}`);
  }
  t.same(await endpoints(), before, 'the endpoints unchanged');
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui/events', headers: { ...cross, 'sec-fetch-mode': 'cors' } })).statusCode, 403, 'a dashboard stream (it holds a place)');
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/clock', headers: { ...cross, 'sec-fetch-mode': 'cors' } })).statusCode, 403, 'a read sent by a page');
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui', headers: { ...cross, 'sec-fetch-mode': 'navigate' } })).statusCode, 200, 'a link to the dashboard');
});

t.test('the same origin, however the Host is spelled or rewritten', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const reset = (headers: Record<string, string>) => sandbox.app.inject({ method: 'POST', url: '/_emulator/reset', headers });
  t.equal((await reset({ host: '127.0.0.1:80', origin: 'http://127.0.0.1' })).statusCode, 200, 'the default port written out in Host');
  t.equal((await reset({ host: '127.0.0.1', origin: 'http://127.0.0.1:80' })).statusCode, 200, 'and in Origin');
  t.equal((await reset({ host: 'localhost:443', origin: 'https://localhost' })).statusCode, 200, 'https');
  t.equal((await reset({ host: 'sandbox:4010', origin: 'https://sandbox.example.com', 'sec-fetch-site': 'same-origin' })).statusCode, 200, 'behind a proxy that rewrites Host, the browser says same-origin');
  t.equal((await reset({ host: '127.0.0.1:4010', origin: 'http://127.0.0.1:80' })).statusCode, 403, 'another port');
});
