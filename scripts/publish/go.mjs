// Publishes the Go kit (clients/go, module service-sandbox.dev/go) to a stand-in module proxy and installs it by
// name in a scratch module outside the checkout (docs/clients.md#go-install-by-name):
//   node scripts/publish/go.mjs [--server URL] [--keep]
// 1. a file-based GOPROXY in a temporary folder: <module>/@v/list, vX.Y.Z.info, .mod and .zip in the module zip
//    format (every path under "<module>@<version>/"; left out, as Go leaves them out: VCS folders, vendored
//    packages, nested modules, anything not a regular file);
// 2. a scratch module in another temporary folder, where `go get service-sandbox.dev/go@vX.Y.Z` runs with
//    GOPROXY=file://..., GOFLAGS=-mod=mod, GOSUMDB=off (GONOSUMDB for the module) and a private GOPATH and
//    GOMODCACHE; the time it takes is printed;
// 3. a first `go test` there (a session, webhooks forwarded to the test's own verifying endpoint, a deposit)
//    against --server, or against a server it starts from the built dist/service-sandbox.mjs.
// Exit 0 when the install and the first test passed. test/kits/go-install.test.ts runs it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, lstatSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { deflateRawSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const KIT = path.join(root, 'clients', 'go');
export const MODULE = 'service-sandbox.dev/go';

/** The kit's version: sandbox.Version, as a Go module version (v0.2.0). */
export function kitVersion() {
  const source = readFileSync(path.join(KIT, 'sandbox', 'client.go'), 'utf8');
  const match = /const Version = "([0-9]+\.[0-9]+\.[0-9]+)"/.exec(source);
  if (!match) throw new Error('clients/go/sandbox/client.go has no const Version = "X.Y.Z"');
  return `v${match[1]}`;
}

/** Go's isVendoredPackage (golang.org/x/mod/zip), quirk included: a file in a package under a vendor folder. */
function isVendoredPackage(name) {
  let i = 0;
  if (name.startsWith('vendor/')) i = 'vendor/'.length;
  else if (name.includes('/vendor/')) i = '/vendor/'.length; // sic: Go keeps this offset so module checksums stay stable
  else return false;
  return name.slice(i).includes('/');
}

/** The module's files, relative to its root with forward slashes, as Go's module zip takes them
 * (golang.org/x/mod/zip CreateFromDir): no VCS folders, no vendored packages, no nested modules, regular files only. */
export function moduleFiles(dir = KIT) {
  const files = [];
  const walk = (relative) => {
    for (const entry of readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      const full = path.join(dir, rel);
      if (entry.isDirectory()) {
        if (['.git', '.hg', '.svn', '.bzr'].includes(entry.name)) continue;
        if (existsSync(path.join(full, 'go.mod'))) continue; // a module of its own
        walk(rel);
      } else if (lstatSync(full).isFile() && !isVendoredPackage(rel)) {
        files.push(rel);
      }
    }
  };
  walk('');
  return files.sort();
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buffer) {
  let crc = 0xffffffff;
  for (const byte of buffer) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** A zip archive (deflated entries, a fixed 1980-01-01 time so the same files give the same bytes). */
export function zipOf(entries) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const nameBytes = Buffer.from(name, 'utf8');
    const packed = deflateRawSync(data);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(0, 10); // time
    local.writeUInt16LE(0x21, 12); // date: 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x031e, 4); // made by: Unix, 3.0
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // a regular file, rw-r--r--
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, packed);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** Writes the module at version into a GOPROXY folder (https://go.dev/ref/mod#goproxy-protocol layout). */
export function publish(proxyDir, version = kitVersion()) {
  const at = path.join(proxyDir, ...MODULE.split('/'), '@v'); // the path has no capitals: no !-escaping needed
  mkdirSync(at, { recursive: true });
  const goMod = readFileSync(path.join(KIT, 'go.mod'));
  const files = moduleFiles();
  writeFileSync(path.join(at, 'list'), `${version}\n`);
  writeFileSync(path.join(at, `${version}.info`), `${JSON.stringify({ Version: version, Time: new Date().toISOString() })}\n`);
  writeFileSync(path.join(at, `${version}.mod`), goMod);
  writeFileSync(path.join(at, `${version}.zip`), zipOf(files.map((file) => ({ name: `${MODULE}@${version}/${file}`, data: readFileSync(path.join(KIT, file)) }))));
  return { files, version };
}

const FIRST_TEST = `package firsttest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// The app under test's own webhook endpoint, verifying with the kit's verifier, reached through the kit's forwarding.
func TestADepositReachesTheAppsOwnEndpoint(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	verifier := sandbox.WebhookVerifier{Key: sb.Credentials.Webhook}
	var mu sync.Mutex
	var statuses []sandbox.TransactionStatus
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := verifier.VerifyRequest(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var event sandbox.TransactionWebhookEvent
		json.Unmarshal(raw, &event)
		mu.Lock()
		statuses = append(statuses, event.Transaction.Status)
		mu.Unlock()
	}))
	defer app.Close()
	sb.ForwardWebhooks(t, app.URL+"/webhooks")

	sb.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_ach", Amount: "125.00"}).Expect(202, nil)
	sb.AdvanceClock(1000)
	sb.Settle()
	if clock, err := sb.Clock(context.Background()); err != nil || clock.Now != "2026-03-01T12:00:01.000Z" {
		t.Errorf("clock %+v %v", clock, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(statuses) != 2 || statuses[1] != sandbox.TransactionStatusCompleted {
		t.Errorf("the app got %v", statuses)
	}
}
`;

function run(command, args, options) {
  const started = performance.now();
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  return { ...result, ms: Math.round(performance.now() - started) };
}

/** Starts the built server on a free port; resolves to its URL and a stop function. */
function startServer() {
  const cli = path.join(root, 'dist', 'service-sandbox.mjs');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build, or give --server URL`);
  const child = spawn(process.execPath, [cli, '--port', '0', '--host', '127.0.0.1', '--db', ':memory:', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk.toString('utf8');
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        child.stdout.off('data', onData);
        resolve({ url: match[1], stop: () => new Promise((done) => (child.exitCode !== null ? done() : (child.once('exit', done), child.kill('SIGTERM')))) });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => (output += chunk.toString('utf8')));
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening:\n${output}`)));
  });
}

async function main(argv) {
  const serverAt = argv.indexOf('--server');
  const keep = argv.includes('--keep');
  const work = mkdtempSync(path.join(os.tmpdir(), 'service-sandbox-go-publish-'));
  const proxy = path.join(work, 'proxy');
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'service-sandbox-go-scratch-'));
  const goPath = path.join(work, 'gopath');
  const env = {
    ...process.env,
    GOPROXY: pathToFileURL(proxy).href,
    GOFLAGS: '-mod=mod',
    GOSUMDB: 'off',
    GONOSUMDB: MODULE,
    GOPRIVATE: '',
    GONOPROXY: '',
    GOPATH: goPath,
    GOMODCACHE: path.join(goPath, 'pkg', 'mod'),
    GOCACHE: process.env.GOCACHE ?? path.join(os.tmpdir(), 'service-sandbox-go-kit-cache'), // the build cache only: shared for speed
    GOTOOLCHAIN: 'local',
  };
  let server;
  try {
    const { files, version } = publish(proxy);
    console.log(`published ${MODULE}@${version} (${files.length} files) to ${env.GOPROXY}`);

    writeFileSync(path.join(scratch, 'go.mod'), 'module example.com/first-test\n\ngo 1.19\n');
    writeFileSync(path.join(scratch, 'first_test.go'), FIRST_TEST);
    const get = run('go', ['get', `${MODULE}@${version}`], { cwd: scratch, env });
    if (get.status !== 0) throw new Error(`go get ${MODULE}@${version} failed (${get.status}):\n${get.stdout}${get.stderr}`);
    console.log(`installed ${MODULE}@${version} by name in ${get.ms} ms (go get from the file GOPROXY into ${scratch})`);

    server = serverAt > 0 ? { url: argv[serverAt + 1], stop: async () => {} } : await startServer();
    const test = run('go', ['test', '-count=1', '-v', './...'], { cwd: scratch, env: { ...env, SANDBOX_URL: server.url }, timeout: 300_000 });
    process.stdout.write(test.stdout);
    process.stderr.write(test.stderr);
    if (test.status !== 0) throw new Error(`the first go test in the scratch module failed (${test.status})`);
    console.log(`first go test passed against ${server.url} in ${test.ms} ms (compile included)`);
    return 0;
  } catch (error) {
    console.error(`scripts/publish/go.mjs: ${error.message}`);
    return 1;
  } finally {
    await server?.stop();
    if (keep) {
      console.log(`kept ${work} and ${scratch}`);
    } else {
      // the module cache is read-only, as Go makes it: go clean empties it before the folder goes
      spawnSync('go', ['clean', '-modcache'], { cwd: scratch, env, stdio: 'ignore' });
      rmSync(work, { recursive: true, force: true });
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) process.exitCode = await main(process.argv.slice(2));
