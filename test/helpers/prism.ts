import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Test } from 'tap';
import { freePort } from './receiver.js';
import { PROJECT_ROOT } from './server-process.js';
import { plainNode } from './node-child.js';

// Prism (docs/openapi.md#prism), the devDependency's CLI on a free loopback port: `mock DOCUMENT` or `proxy DOCUMENT
// URL`, then further flags. Waits for its "Prism is listening" line (at most 90 s: its first start compiles the document), asserts it came,
// and stops it when the test ends. Answers the address to send requests to, and its output so far (its validation
// reports, for a proxy).
export async function startPrism(t: Test, args: readonly string[], what: string): Promise<{ url: string; output: () => string }> {
  const port = await freePort();
  const started = Date.now();
  const prismBin = path.join(PROJECT_ROOT, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js');
  const prism = spawn(...plainNode([prismBin, ...args, '-h', '127.0.0.1', '-p', String(port)]), { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  prism.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  prism.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const prismExited = new Promise<void>((resolve) => prism.once('exit', () => resolve()));
  t.teardown(async () => {
    prism.kill('SIGTERM');
    await prismExited;
  });
  const deadline = Date.now() + 90_000;
  while (!output.includes('Prism is listening') && Date.now() < deadline && prism.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 100));
  t.match(output, /Prism is listening/, `${what} (${Date.now() - started} ms to start)`);
  return { url: `http://127.0.0.1:${port}`, output: () => output };
}
