import { spawn } from 'node:child_process';
import { plainCommand } from './node-child.js';

// A whole test suite of another language (a recipe, a kit's scenarios) run as a child: in its own process group, so a
// timeout ends the runner and everything it started (JVMs, test binaries, `listen` children), with its output kept
// for the assertion that reports it (docs/architecture.md#child-processes-of-tests).

export interface SuiteRun {
  /** The exit code; null when it was killed or could not start. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr interleaved, with a note when it was killed or could not start. */
  output: string;
  ms: number;
}

export function runSuite(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<SuiteRun> {
  const started = Date.now();
  const child = spawn(...plainCommand(command, args), { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const timer = setTimeout(() => {
    output += `\n[killed after ${options.timeoutMs} ms]`;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }, options.timeoutMs);
  return new Promise((resolve) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, output: `${output}\n${String(error)}`, ms: Date.now() - started });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output, ms: Date.now() - started });
    });
  });
}
