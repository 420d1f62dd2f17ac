// The Java kit installed by its Maven coordinates from a stand-in repository (docs/clients.md#java-coordinates):
//   node scripts/publish/java.mjs [--server URL] [--javac] [--keep]
// 1. builds the kit's two jars with clients/java/build.sh (javac), and their sources jars;
// 2. publishes them, with their poms (and the parent pom), into a Maven-layout file repository in a temporary folder:
//    dev/servicesandbox/<artifactId>/0.2.0/<artifactId>-0.2.0.{pom,jar} (+ -sources.jar), maven-metadata.xml per
//    artifact, a .sha1 and .md5 beside every file, as `mvn deploy` to a file:// URL writes them;
// 3. makes a scratch project in another temporary folder, outside the checkout, that depends on
//    dev.servicesandbox:service-sandbox-junit5:0.2.0 (the client comes along) and holds one JUnit 5 test;
// 4. installs and runs it: with Maven offline (`mvn -o test`, the file repository declared in the project, Maven's
//    plugins and JUnit from the local repository) when mvn is here and its plugins resolve offline, else (or with
//    --javac) with javac alone, reading the two jars from the repository by their coordinates' paths and JUnit
//    from /usr/share/java;
// 5. against --server URL, else a server it starts (the built dist/service-sandbox.mjs) and stops.
// Prints the install time (resolving the coordinates and compiling the project) and the way it installed.
// Exit 0 when the first test passed, 1 when something failed, 77 when a toolchain is missing (JDK, JUnit's console
// launcher): test/kits/java-install.test.ts then skips unless REQUIRE_RECIPES=1.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const KIT = path.join(root, 'clients', 'java');
const GROUP = 'dev.servicesandbox';
const JUNIT_DIR = process.env.JUNIT_DIR ?? '/usr/share/java';
const CONSOLE = process.env.JUNIT_JAR ?? path.join(JUNIT_DIR, 'junit-platform-console-standalone.jar');
/** The JUnit the Maven scratch project uses: one whose jars a local repository here holds (the extension needs 5.9+). */
const SCRATCH_JUNIT = process.env.SCRATCH_JUNIT_VERSION ?? '5.10.2';
const TOOLCHAIN_MISSING = 77;
/** C1 only and the serial GC, as clients/java/build.sh: they halve a short JVM's start (Maven's too, via MAVEN_OPTS). */
const FAST = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xshare:auto'];

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const keep = args.includes('--keep');
const forceJavac = args.includes('--javac');

function say(line) {
  process.stdout.write(`${line}\n`);
}

/** Ends the script with this message and exit code, after its clean-up (main's finally). */
class Failure extends Error {
  constructor(message, code = 1) {
    super(message);
    this.code = code;
  }
}

function fail(message, code = 1) {
  throw new Failure(message, code);
}

/** Runs a command to its end; its output on failure. */
function run(command, commandArgs, options = {}) {
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  return { status: result.error ? -1 : result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}` };
}

const has = (command) => run('sh', ['-c', `command -v ${command}`]).status === 0;

/** The version of the kit, from its parent pom (one version for the server and every kit). */
function kitVersion() {
  const pom = readFileSync(path.join(KIT, 'pom.xml'), 'utf8');
  const version = /<artifactId>service-sandbox-parent<\/artifactId>\s*<version>([^<]+)<\/version>/.exec(pom)?.[1];
  if (!version) fail('no version in clients/java/pom.xml');
  return version;
}

function digest(file, algorithm) {
  return createHash(algorithm).update(readFileSync(file)).digest('hex');
}

/** One artifact into the repository, as `mvn deploy` lays it out: files, checksums, maven-metadata.xml. */
function publish(repo, artifactId, version, files) {
  const dir = path.join(repo, ...GROUP.split('.'), artifactId, version);
  mkdirSync(dir, { recursive: true });
  for (const [suffix, source] of files) {
    const target = path.join(dir, `${artifactId}-${version}${suffix}`);
    copyFileSync(source, target);
    writeFileSync(`${target}.sha1`, digest(target, 'sha1'));
    writeFileSync(`${target}.md5`, digest(target, 'md5'));
  }
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const metadata = path.join(repo, ...GROUP.split('.'), artifactId, 'maven-metadata.xml');
  writeFileSync(
    metadata,
    `<?xml version="1.0" encoding="UTF-8"?>\n<metadata>\n  <groupId>${GROUP}</groupId>\n  <artifactId>${artifactId}</artifactId>\n` +
      `  <versioning>\n    <latest>${version}</latest>\n    <release>${version}</release>\n    <versions>\n      <version>${version}</version>\n` +
      `    </versions>\n    <lastUpdated>${stamp}</lastUpdated>\n  </versioning>\n</metadata>\n`,
  );
  writeFileSync(`${metadata}.sha1`, digest(metadata, 'sha1'));
  writeFileSync(`${metadata}.md5`, digest(metadata, 'md5'));
  return dir;
}

function sourcesJar(out, name, sourceDir) {
  const jar = path.join(out, `${name}-sources.jar`);
  const made = run('jar', ['--create', '--file', jar, '-C', sourceDir, '.']);
  if (made.status !== 0) fail(`jar of ${sourceDir} failed:\n${made.output}`);
  return jar;
}

const FIRST_TEST = (pkg, version) => `package ${pkg};

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.servicesandbox.Sandbox;
import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.Session;
import dev.servicesandbox.junit.SandboxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

// A first test of a project that installed the kit by its coordinates (docs/clients.md#java).
@ExtendWith(SandboxExtension.class)
class FirstTest {
  @Test
  void lists_the_accounts_of_a_fresh_session(Session session, SandboxClient api) {
    assertTrue(session.id().startsWith("ses_"), session.id());
    assertEquals("2026-03-01T12:00:00.000Z", session.now(), "sessions start frozen at the kit's default clock");
    assertEquals(200, api.get("/v1/accounts").status());
    assertEquals("${version}", Sandbox.VERSION);
  }
}
`;

function scratchPom(version, repo) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>payments-tests</artifactId>
  <version>1.0.0</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <maven.compiler.release>17</maven.compiler.release>
  </properties>
  <repositories>
    <repository>
      <id>sandbox-stand-in</id>
      <url>${new URL(`file://${repo}`).href}</url>
    </repository>
  </repositories>
  <dependencies>
    <dependency>
      <groupId>${GROUP}</groupId>
      <artifactId>service-sandbox-junit5</artifactId>
      <version>${version}</version>
      <scope>test</scope>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter-api</artifactId>
      <version>${SCRATCH_JUNIT}</version>
      <scope>test</scope>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter-engine</artifactId>
      <version>${SCRATCH_JUNIT}</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.11.0</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-jar-plugin</artifactId><version>3.4.1</version></plugin>
    </plugins>
  </build>
</project>
`;
}

/**
 * A local repository of its own for the scratch project: every entry of the user's (~/.m2/repository: Maven's
 * plugins, JUnit) linked in, except this kit's group, so the coordinates can only come from the stand-in repository
 * and nothing of them is left in the user's cache.
 */
function scratchLocalRepository(dir) {
  const user = path.join(os.homedir(), '.m2', 'repository');
  const local = path.join(dir, 'm2');
  mkdirSync(path.join(local, 'dev'), { recursive: true });
  if (!existsSync(user)) return local;
  for (const entry of readdirSync(user)) if (entry !== 'dev') symlinkSync(path.join(user, entry), path.join(local, entry));
  if (existsSync(path.join(user, 'dev'))) {
    for (const entry of readdirSync(path.join(user, 'dev'))) if (entry !== 'servicesandbox') symlinkSync(path.join(user, 'dev', entry), path.join(local, 'dev', entry));
  }
  return local;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startServer() {
  const cli = path.join(root, 'dist', 'service-sandbox.mjs');
  if (!existsSync(cli)) fail('no --server and no built dist/service-sandbox.mjs (npm run build)');
  const port = await freePort();
  const child = spawn(process.execPath, [cli, '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/_emulator/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) fail(`the server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, stop: () => child.kill('SIGTERM') };
}

/** The Maven way: resolution offline, from the stand-in repository (file://) and the local one. */
function installWithMaven(project, repo, version, env) {
  writeFileSync(path.join(project, 'pom.xml'), scratchPom(version, repo));
  const localRepo = scratchLocalRepository(project);
  const common = ['-o', '-B', '-q', `-Dmaven.repo.local=${localRepo}`, '-Daether.offline.protocols=file'];
  const started = performance.now();
  const compiled = run('mvn', [...common, 'test-compile'], { cwd: project, env });
  const installMs = performance.now() - started;
  if (compiled.status !== 0) return { ok: false, unresolved: /offline mode|could not be resolved|Could not resolve|PluginResolutionException/i.test(compiled.output), output: compiled.output };
  const tested = run('mvn', [...common, 'surefire:test'], { cwd: project, env });
  return { ok: tested.status === 0, installMs, output: `${compiled.output}${tested.output}`, testFailed: tested.status !== 0 };
}

/** The javac way: the jars read from the repository by their coordinates' paths, JUnit from /usr/share/java. */
function installWithJavac(project, repo, version, env) {
  const jarOf = (artifactId) => path.join(repo, ...GROUP.split('.'), artifactId, version, `${artifactId}-${version}.jar`);
  const started = performance.now();
  const classPath = [jarOf('service-sandbox-client'), jarOf('service-sandbox-junit5')];
  for (const jar of classPath) if (!existsSync(jar)) return { ok: false, output: `${jar} is not in the repository` };
  const sources = path.join(project, 'src', 'test', 'java', 'example', 'FirstTest.java');
  const classes = path.join(project, 'target', 'test-classes');
  const compiled = run('javac', [...FAST.map((flag) => `-J${flag}`), '-d', classes, '--release', '17', '-Xlint:all', '-Werror', '-cp', [...classPath, CONSOLE].join(':'), sources], { env });
  const installMs = performance.now() - started;
  if (compiled.status !== 0) return { ok: false, output: compiled.output };
  const tested = run('java', [...FAST, '-jar', CONSOLE, '--class-path', [classes, ...classPath].join(':'), '--scan-class-path', '--exclude-engine=junit-vintage',
    '--disable-banner', '--disable-ansi-colors', '--details=summary', '--fail-if-no-tests'], { cwd: project, env });
  return { ok: tested.status === 0, installMs, output: tested.output, testFailed: tested.status !== 0 };
}

async function main() {
  if (!has('javac') || !has('jar') || !has('java')) fail('javac/jar/java not found (a JDK 17+)', TOOLCHAIN_MISSING);
  if (!existsSync(CONSOLE)) fail(`${CONSOLE} not found (apt-get install junit5, or set JUNIT_JAR)`, TOOLCHAIN_MISSING);
  const version = kitVersion();
  const work = mkdtempSync(path.join(os.tmpdir(), 'sandbox-java-publish-'));
  const project = mkdtempSync(path.join(os.tmpdir(), 'sandbox-java-project-'));
  let server;
  try {
    // 1. the jars
    const build = path.join(work, 'build');
    const built = run('sh', [path.join(KIT, 'build.sh')], { env: { ...process.env, BUILD_DIR: build } });
    if (built.status === TOOLCHAIN_MISSING) fail(built.output.trim(), TOOLCHAIN_MISSING);
    if (built.status !== 0) fail(`clients/java/build.sh failed:\n${built.output}`);

    // 2. the repository
    const repo = path.join(work, 'repo');
    publish(repo, 'service-sandbox-parent', version, [['.pom', path.join(KIT, 'pom.xml')]]);
    publish(repo, 'service-sandbox-client', version, [
      ['.pom', path.join(KIT, 'client', 'pom.xml')],
      ['.jar', path.join(build, 'service-sandbox-client.jar')],
      ['-sources.jar', sourcesJar(build, 'service-sandbox-client', path.join(KIT, 'client', 'src', 'main', 'java'))],
    ]);
    publish(repo, 'service-sandbox-junit5', version, [
      ['.pom', path.join(KIT, 'junit5', 'pom.xml')],
      ['.jar', path.join(build, 'service-sandbox-junit5.jar')],
      ['-sources.jar', sourcesJar(build, 'service-sandbox-junit5', path.join(KIT, 'junit5', 'src', 'main', 'java'))],
    ]);
    say(`published ${GROUP}:service-sandbox-client:${version} and ${GROUP}:service-sandbox-junit5:${version} to ${repo}`);

    // 3. the scratch project, outside the checkout
    const testDir = path.join(project, 'src', 'test', 'java', 'example');
    mkdirSync(testDir, { recursive: true });
    writeFileSync(path.join(testDir, 'FirstTest.java'), FIRST_TEST('example', version));

    // 4. and 5.
    const given = option('--server');
    if (!given) server = await startServer();
    const url = given ?? server.url;
    const env = { ...process.env, SANDBOX_URL: url, SANDBOX_LABEL: `java-install-${process.pid}`, MAVEN_OPTS: process.env.MAVEN_OPTS ?? FAST.join(' ') };
    let result;
    let way;
    if (!forceJavac && has('mvn')) {
      result = installWithMaven(project, repo, version, env);
      way = 'mvn -o (offline, the stand-in repository as a file:// repository)';
      if (!result.ok && result.unresolved) {
        say(`mvn -o cannot resolve Maven's plugins or JUnit offline here; installing with javac instead:\n${result.output.split('\n').filter((l) => /ERROR/.test(l)).slice(0, 3).join('\n')}`);
        result = undefined;
      }
    }
    if (!result) {
      result = installWithJavac(project, repo, version, env);
      way = 'javac (the jars read from the stand-in repository by their coordinates)';
    }
    if (!result.ok) fail(`the scratch project ${result.testFailed ? 'test failed' : 'did not build'} (${way}):\n${result.output}`);
    say(`installed ${GROUP}:service-sandbox-junit5:${version} by its coordinates with ${way} in ${(result.installMs / 1000).toFixed(1)} s`);
    say(`install time: ${Math.round(result.installMs)} ms`);
    say(`first test passed against ${url} in ${project}`);
  } finally {
    server?.stop();
    if (keep) say(`kept ${work} and ${project}`);
    else {
      rmSync(work, { recursive: true, force: true });
      rmSync(project, { recursive: true, force: true });
    }
  }
}

try {
  await main();
} catch (error) {
  if (!(error instanceof Failure)) throw error;
  process.stderr.write(`publish java: ${error.message}\n`);
  process.exitCode = error.code;
}
