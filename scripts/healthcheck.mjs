// The image's HEALTHCHECK (Dockerfile, docs/docker.md#healthcheck): healthy when the server answers
// GET /_emulator/health; and healthy too when the container does not serve at all, because it runs another
// sub-command of the CLI (`listen`, `sign`, `check-receiver`, `help`): those have no port to ask, and a listener
// marked unhealthy would be restarted by an orchestrator for nothing. What the container runs is PID 1's command line
// (the ENTRYPOINT's `node ... dist/service-sandbox.mjs` and the arguments given to `docker run`).
import { readFileSync } from 'node:fs';

const NOT_SERVING = new Set(['listen', 'sign', 'check-receiver', 'help', '--help', '-h']);

/** The CLI's arguments in PID 1's command line: what follows the script (dist/service-sandbox.mjs). */
function cliArguments() {
  try {
    // HEALTHCHECK_CMDLINE: another file of the same form, for test/cli/healthcheck.test.ts
    const argv = readFileSync(process.env.HEALTHCHECK_CMDLINE ?? '/proc/1/cmdline', 'utf8').split('\0').filter(Boolean);
    const script = argv.findIndex((arg) => arg.endsWith('service-sandbox.mjs'));
    return script === -1 ? [] : argv.slice(script + 1);
  } catch {
    return []; // no /proc (not Linux): ask the server
  }
}

const args = cliArguments();
if (args.length > 0 && NOT_SERVING.has(args[0])) process.exit(0);
const flag = args.indexOf('--port');
const port = flag !== -1 && args[flag + 1] ? args[flag + 1] : process.env.PORT || 4010;
fetch(`http://127.0.0.1:${port}/_emulator/health`, { signal: AbortSignal.timeout(2500) }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1),
);
