import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startServer } from '../../src/server.js';
import type { Config } from '../../src/config.js';
import { dockerHostName, startSandboxContainer, type TestcontainersModule } from '../../src/client/testcontainers.js';
import { VERSION } from '../../src/version.js';
import { START } from '../helper.js';

// `service-sandbox/testcontainers` (docs/clients.md#testcontainers):
// 1. always: its wiring, with a stand-in for the testcontainers module whose "container" is a server started here
//    (the image, the exposed port, the wait on the health endpoint, the URL from the mapped port, sessions ended on stop);
// 2. when SANDBOX_IMAGE names a built image of the Dockerfile: the real thing, testcontainers 10 (the package's optional
//    peer, a devDependency here) against podman's Docker-compatible API on a socket of this test's own, the Ryuk
//    reaper off and every connection on 127.0.0.1, waiting on an HTTP answer of /_emulator/health (podman runs no
//    HEALTHCHECK without systemd).

t.test('the module with a stand-in testcontainers: image, port, health wait, mapped URL, sessions', async (t) => {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as Partial<Config> as never });
  t.teardown(() => server.close());
  const calls: string[] = [];
  let stopped = false;
  class GenericContainer {
    constructor(image: string) {
      calls.push(`image ${image}`);
    }
    withExposedPorts(...ports: number[]) {
      calls.push(`ports ${ports.join(',')}`);
      return this;
    }
    withEnvironment(environment: Record<string, string>) {
      calls.push(`env ${JSON.stringify(environment)}`);
      return this;
    }
    withWaitStrategy(strategy: unknown) {
      calls.push(`wait ${String(strategy)}`);
      return this;
    }
    withStartupTimeout(ms: number) {
      calls.push(`timeout ${ms}`);
      return this;
    }
    async start() {
      return {
        getHost: () => '127.0.0.1',
        getMappedPort: (port: number) => (port === 4010 ? Number(new URL(server.url).port) : 0),
        stop: async () => {
          stopped = true;
        },
      };
    }
  }
  const standIn: TestcontainersModule = {
    GenericContainer,
    Wait: { forHttp: (pathname: string, port: number) => ({ forStatusCode: (status: number) => `http ${pathname} ${port} ${status}` }) },
  } as never;

  const container = await startSandboxContainer({ testcontainers: standIn, env: { LOG_LEVEL: 'warn' } });
  t.same(calls, [`image service-sandbox:${VERSION}`, 'ports 4010', 'wait http /_emulator/health 4010 200', 'env {"LOG_LEVEL":"warn"}'], 'the image of docs/docker.md on 4010, waited for on an HTTP answer of its health endpoint');
  t.equal(container.url, server.url, 'the URL is the mapped port on the host');
  const first = await container.session({ label: 'testcontainers-stand-in' });
  const second = await container.session({ label: 'testcontainers-stand-in' });
  t.equal((await first.api.GET('/v1/accounts')).response.status, 200, 'a session client signs');
  await first.end();
  await first.end();
  t.same((await container.client.listSessions('testcontainers-stand-in')).map((session) => session.id), [second.session.id], 'end() ends one session, once');
  await container.stop();
  t.ok(stopped, 'the container is stopped');
  t.same(await container.client.listSessions('testcontainers-stand-in'), [], 'and the sessions still live were ended first');
});

/** podman's Docker-compatible API on a socket of this test's own, or the DOCKER_HOST already set. */
async function dockerHost(t: Test): Promise<string | undefined> {
  if (process.env.DOCKER_HOST) return process.env.DOCKER_HOST;
  if (spawnSync('podman', ['--version']).status !== 0) return undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-podman-'));
  const socket = path.join(dir, 'podman.sock');
  const service: ChildProcess = spawn('podman', ['--runtime', 'runc', 'system', 'service', '--time=0', `unix://${socket}`], { stdio: 'ignore' });
  t.teardown(() => {
    service.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });
  for (let attempt = 0; attempt < 100 && !existsSync(socket); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50)); // the socket appears
  return existsSync(socket) ? `unix://${socket}` : undefined;
}

t.test('the image in a container started by testcontainers 10: sessions, a deposit settled', async (t) => {
  const image = process.env.SANDBOX_IMAGE;
  const skip = (reason: string) => t.pass('a container started by testcontainers', { skip: reason });
  if (!image) return skip('SANDBOX_IMAGE names no image (build one: podman build --format docker -t service-sandbox .)');
  const host = await dockerHost(t);
  if (!host) return skip('no DOCKER_HOST and no podman to serve one');
  process.env.DOCKER_HOST = host;
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  process.env.TESTCONTAINERS_HOST_OVERRIDE = '127.0.0.1';

  const started = Date.now();
  const container = await startSandboxContainer({ image, startupTimeoutMs: 60_000 });
  t.teardown(() => container.stop());
  t.match(container.url, /^http:\/\/127\.0\.0\.1:\d+$/, `started and answering in ${Date.now() - started} ms`);

  const [one, two] = await Promise.all([container.session({ label: 'tc', seed: 'tc-1' }), container.session({ label: 'tc', seed: 'tc-2' })]);
  const deposit = await one.api.POST('/v1/sandbox/accounts/{accountId}/deposits', {
    params: { path: { accountId: 'acct_acme_usd' } },
    body: { depositInstructionId: 'di_acme_usd_ach', amount: '10.00' },
  });
  t.equal(deposit.response.status, 202, JSON.stringify(deposit.error));
  await one.advanceClock(3_600_000);
  t.equal((await one.settle()).settled, true);
  const count = async (client: typeof one) => (await client.api.GET('/v1/transactions', { params: { query: { pageSize: 1 } } })).data?.totalRecords ?? -1;
  t.equal(await count(one), (await count(two)) + 1, 'the deposit is in its own session only');
  await one.end();
  t.same((await container.client.listSessions('tc')).map((session) => session.id), [two.session.id]);
});

t.test('a Docker daemon reached by a dotted name: the container is told to take that name', async (t) => {
  // docs/robustness.md#web-pages: the server answers only names it takes, and testcontainers reaches it by the daemon's
  t.equal(dockerHostName({ DOCKER_HOST: 'tcp://docker.ci.example.com:2376' }), 'docker.ci.example.com');
  t.equal(dockerHostName({ DOCKER_HOST: 'tcp://docker.ci.example.com:2376', TESTCONTAINERS_HOST_OVERRIDE: 'Runner.Example.' }), 'runner.example', 'the override wins');
  for (const env of [{}, { DOCKER_HOST: 'unix:///var/run/docker.sock' }, { DOCKER_HOST: 'tcp://10.0.0.5:2375' }, { DOCKER_HOST: 'tcp://dind:2375' }, { TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1' }, { TESTCONTAINERS_HOST_OVERRIDE: 'api.localhost' }]) {
    t.equal(dockerHostName(env), undefined, JSON.stringify(env));
  }
});
