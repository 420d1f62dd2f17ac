import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from './server-process.js';
import { plainCommand } from './node-child.js';

// Tools too heavy for devDependencies (client generators, newman: docs/openapi.md#generators), installed on
// demand at pinned versions into a git-ignored cache under .peers/ (as bench/ installs its peers into
// bench/.peers), once: later runs find them there. With CI=true a failed install fails the test; elsewhere (no
// network, say) the test skips and says why.

const exec = promisify(execFile);
export const PEERS_ROOT = path.join(PROJECT_ROOT, '.peers');

export interface Peers {
  dir: string;
  bin(name: string): string;
}

function installed(dir: string, packages: Record<string, string>): boolean {
  return Object.entries(packages).every(([name, version]) => {
    try {
      return JSON.parse(readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8')).version === version;
    } catch {
      return false;
    }
  });
}

/**
 * The cache `.peers/<name>` with `packages` (name -> exact version) installed: a Peers, or a string saying why
 * not. `links` are symlinks to make in its node_modules afterwards (npm would prune them as extraneous).
 */
export async function ensurePeers(name: string, packages: Record<string, string>, links: Record<string, string> = {}): Promise<Peers | string> {
  const dir = path.join(PEERS_ROOT, name);
  mkdirSync(dir, { recursive: true });
  const lock = path.join(dir, '.installing');
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 300_000) rmdirSync(lock); // left over from a killed run
      } catch {
        // gone meanwhile
      }
      if (Date.now() > deadline) return `timed out waiting for ${lock}`;
      await sleep(250);
    }
  }
  try {
    if (!installed(dir, packages)) {
      if (!existsSync(path.join(dir, 'package.json'))) writeFileSync(path.join(dir, 'package.json'), '{ "private": true }\n');
      const specs = Object.entries(packages).map(([pkg, version]) => `${pkg}@${version}`);
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
      try {
        await exec(...plainCommand(npm, ['install', '--no-audit', '--no-fund', '--loglevel', 'error', '--save-exact', ...specs]), { cwd: dir, timeout: 280_000 });
      } catch (error) {
        return `npm install ${specs.join(' ')} in ${path.relative(PROJECT_ROOT, dir)} failed: ${String((error as { stderr?: string }).stderr ?? error).slice(0, 600)}`;
      }
      if (!installed(dir, packages)) return `npm install ${specs.join(' ')} in ${path.relative(PROJECT_ROOT, dir)} left other versions`;
    }
    for (const [link, target] of Object.entries(links)) {
      const at = path.join(dir, 'node_modules', link);
      if (existsSync(at) && realpathSync(at) === realpathSync(target)) continue;
      rmSync(at, { force: true });
      symlinkSync(path.relative(path.dirname(at), target), at);
    }
    return { dir, bin: (tool) => path.join(dir, 'node_modules', '.bin', tool) };
  } finally {
    rmdirSync(lock);
  }
}

/** What a test does when its peers are missing: fail on CI (CI=true), skip elsewhere, with the reason. */
export function peersMissing(t: { fail(message: string): void; plan(count: number, comment?: string): void }, reason: string): void {
  if (process.env.CI === 'true') t.fail(`needed in CI: ${reason}`);
  else t.plan(0, `skipped: ${reason}`); // a plan of 0 with a reason: tap reports the test as skipped
}
