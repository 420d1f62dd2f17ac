import { spawn } from 'node:child_process';
import t from 'tap';
import { CLI, ensureBuilt } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';

// docs/configuration.md#listening-beyond-this-machine: the line a serving CLI prints names the address it is bound to
// (0.0.0.0 used to print http://127.0.0.1:...), and a server others can reach with no admin token says, in one
// warning line, what anyone who reaches the port can do. The full output is read once the process has exited.

interface Served {
  stdout: string;
  stderr: string;
}

/** Start the built CLI, wait for its listening line, fetch its health there, stop it, and return all it printed. */
function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Served & { healthy: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(...plainNode([CLI, '--port', '0', '--clock', '2026-03-01T12:00:00.000Z', '--log-level', 'warn', ...args]), { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let healthy = false;
    let asked = false;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const line = stdout.split('\n')[0]!;
      const local = /from this machine (http:\/\/\S+?),|listening on (http:\/\/\S+) /.exec(line);
      if (stdout.includes('\n') && local && !asked) {
        asked = true;
        fetch(`${local[1] ?? local[2]}/_emulator/health`)
          .then((response) => (healthy = response.status === 200))
          .catch(() => undefined)
          .finally(() => child.kill('SIGTERM'));
      }
    });
    child.once('error', reject);
    child.once('exit', () => resolve({ stdout, stderr, healthy }));
  });
}

t.before(ensureBuilt);

t.test('0.0.0.0: the bound address, every interface, the local address to use, and the warning', async (t) => {
  const open = await serve(['--host', '0.0.0.0']);
  t.match(open.stdout, /^service-sandbox listening on http:\/\/0\.0\.0\.0:(\d+) \(every IPv4 interface; from this machine http:\/\/127\.0\.0\.1:\1, docs http:\/\/127\.0\.0\.1:\1\/docs, dashboard http:\/\/127\.0\.0\.1:\1\/_emulator\/ui\)\n/);
  t.ok(open.healthy, 'the local address answers');
  const warnings = open.stderr.split('\n').filter((line) => line.includes('warning'));
  t.equal(warnings.length, 1, open.stderr);
  t.match(
    warnings[0],
    /^service-sandbox: warning: listening on 0\.0\.0\.0 with no admin token: anyone who can reach port \d+ can reset the sandbox, act as its users and make the server send requests to addresses of their choosing; set ADMIN_TOKEN \(or --admin-token\)/,
  );

  const guarded = await serve(['--host', '0.0.0.0'], { ADMIN_TOKEN: 'let-me-in' });
  t.match(guarded.stdout, /listening on http:\/\/0\.0\.0\.0:\d+ /);
  t.notMatch(guarded.stderr, /warning/, 'an admin token: no warning');

  const quiet = await serve(['--host', '0.0.0.0', '--log-level', 'error']);
  t.notMatch(quiet.stderr, /warning/, '--log-level error: no warning, as for the other start-up warnings');
});

t.test('loopback: the line as before, and no warning', async (t) => {
  const local = await serve(['--host', '127.0.0.1']);
  t.match(local.stdout, /^service-sandbox listening on http:\/\/127\.0\.0\.1:(\d+) \(docs http:\/\/127\.0\.0\.1:\1\/docs, dashboard http:\/\/127\.0\.0\.1:\1\/_emulator\/ui\)\n/);
  t.ok(local.healthy);
  t.notMatch(local.stderr, /warning/);
});
