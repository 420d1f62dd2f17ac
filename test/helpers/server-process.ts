import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { signRequest } from '../../src/lib/hmac.js';
import { plainNode } from './node-child.js';

// The built server (dist/service-sandbox.mjs, the bundle `npm start` runs) as a child process, for the crash and multi-process concurrency tests
// (docs/robustness.md). `npm test` builds before tap runs; run on their own, these tests build first when dist/ is
// missing or older than src/ (scripts/build-if-needed.mjs), one build at a time across test processes.

export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');
export const CLI = path.join(PROJECT_ROOT, 'dist', 'service-sandbox.mjs');

/** Build dist/ when it is missing or stale; throws with the compiler's output when the build fails. */
export async function ensureBuilt(): Promise<void> {
  const lock = path.join(tmpdir(), `service-sandbox-build-${createHash('sha256').update(PROJECT_ROOT).digest('hex').slice(0, 12)}.lock`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // another test process is building; a lock older than 3 minutes is left over from a killed run
      try {
        if (Date.now() - statSync(lock).mtimeMs > 180_000) rmdirSync(lock);
      } catch {
        // gone meanwhile
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the build lock ${lock}`);
      await sleep(200);
    }
  }
  try {
    const result = spawnSync(...plainNode([path.join(PROJECT_ROOT, 'scripts', 'build-if-needed.mjs')]), { cwd: PROJECT_ROOT, encoding: 'utf8' });
    if (result.status !== 0 || !existsSync(CLI)) {
      throw new Error(`the built server is needed (dist/service-sandbox.mjs) and the build failed:\n${result.stdout}\n${result.stderr}`);
    }
  } finally {
    rmdirSync(lock);
  }
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** Everything the process wrote, stdout and stderr. */
  output(): string;
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL: no shutdown hook, no final flush, like a power cut for the process. */
  kill(): Promise<void>;
  /** SIGTERM and wait (graceful stop). */
  stop(): Promise<void>;
}

export interface ServerOptions {
  db: string;
  /** `realtime` (default) or an ISO instant (frozen); null: no --clock (a database file resumes its stored clock). */
  clock?: string | null;
  webhookUrl?: string;
  logLevel?: string;
  extraArgs?: string[];
  /** Real ms to wait for the "listening" line. */
  startTimeoutMs?: number;
}

/** Start `node dist/service-sandbox.mjs` on a random port and wait until it listens. */
export async function startServerProcess(options: ServerOptions): Promise<ServerProcess> {
  const args = [CLI, '--db', options.db, '--port', '0', '--host', '127.0.0.1', '--log-level', options.logLevel ?? 'warn'];
  if (options.clock !== null) args.push('--clock', options.clock ?? 'realtime');
  if (options.webhookUrl) args.push('--webhook-url', options.webhookUrl);
  args.push(...(options.extraArgs ?? []));
  // A clean environment for the flags the CLI also reads, so a developer's PORT or DB_PATH cannot leak in.
  const env = { ...process.env };
  for (const name of ['PORT', 'HOST', 'DB_PATH', 'FIXTURES', 'SEED', 'CLOCK', 'WEBHOOK_URL', 'LOG_LEVEL', 'ADMIN_TOKEN', 'JOURNAL_SIZE', 'WEBHOOK_TIMEOUT_MS', 'READ_CACHE', 'SNAPSHOT', 'SCENARIOS', 'NODE_OPTIONS']) {
    delete env[name];
  }
  const child = spawn(...plainNode(args), { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not start within ${options.startTimeoutMs ?? 20_000} ms:\n${output}`));
    }, options.startTimeoutMs ?? 20_000);
    const onData = () => {
      const match = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (code ${code}, signal ${signal}) before listening:\n${output}`));
    });
  });
  const port = Number(new URL(url).port);
  return {
    child,
    url,
    port,
    output: () => output,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** An HMAC-signed request to a server process as usr_acme (the SINGLE_USER fixture key); the JSON answer. */
export async function signedCall(server: ServerProcess, method: string, target: string, body?: unknown): Promise<{ status: number; body: any }> {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const timestamp = String(Date.now());
  const apiKey = 'pk_sandbox_single';
  const headers: Record<string, string> = {
    'x-service-api-key': apiKey,
    'x-service-timestamp': timestamp,
    'x-service-program-id': 'prg_sandbox',
    'x-service-signature': signRequest({ apiKey, secret: 'sk_sandbox_single_secret', timestamp, method, target, body: payload }),
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.url}${target}`, { method, headers, body: body === undefined ? undefined : payload });
  return { status: response.status, body: await response.json() };
}
