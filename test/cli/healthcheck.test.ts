import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startServer } from '../../src/server.js';
import { PROJECT_ROOT } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';
import { START } from '../helper.js';

// The image's HEALTHCHECK, scripts/healthcheck.mjs (docs/docker.md#healthcheck), with PID 1's command line given as a
// file: a serving container is healthy when its health route answers (on PORT or --port), unhealthy when it does
// not; a container running `listen`, `sign` or `check-receiver` serves nothing and is healthy.

const SCRIPT = path.join(PROJECT_ROOT, 'scripts', 'healthcheck.mjs');

t.test('healthy when serving and answering, or when running a sub-command that does not serve', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'healthcheck-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as never });
  t.teardown(() => server.close());
  const port = new URL(server.url).port;
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const nothing = String((closed.address() as { port: number }).port);
  await new Promise<void>((resolve) => closed.close(() => resolve()));

  const check = (argv: string[], env: Record<string, string> = {}) => {
    const file = path.join(dir, `cmdline-${Math.random().toString(36).slice(2)}`);
    writeFileSync(file, `${['node', '--max-semi-space-size=4', 'dist/service-sandbox.mjs', ...argv].join('\0')}\0`);
    // asynchronously: the server answering the check runs in this process
    const child = spawn(...plainNode([SCRIPT]), { env: { ...process.env, HEALTHCHECK_CMDLINE: file, ...env }, stdio: 'ignore' });
    return new Promise<number | null>((resolve) => child.once('exit', resolve));
  };
  t.equal(await check([], { PORT: port }), 0, 'serving (no arguments), PORT answers');
  t.equal(await check(['--port', port]), 0, 'serving on --port');
  t.equal(await check(['serve', '--port', port]), 0, '`serve --port`');
  t.equal(await check([], { PORT: nothing }), 1, 'serving, nothing answers: unhealthy');
  t.equal(await check(['listen', '--forward-to', 'http://host.containers.internal:3000/webhooks'], { PORT: nothing }), 0, 'a listen container is healthy');
  t.equal(await check(['sign', 'GET', '/v1/accounts'], { PORT: nothing }), 0, 'a sign container too');
  t.equal(await check(['check-receiver', 'http://127.0.0.1:9/hooks'], { PORT: nothing }), 0, 'and check-receiver');
});
