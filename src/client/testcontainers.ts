import { GenericContainer, Wait } from 'testcontainers';
import { VERSION } from '../version.js';
import { createSandboxClient, type CreateSessionOptions, type SandboxClient, type Session } from './client.js';

// `service-sandbox/testcontainers` (docs/clients.md#testcontainers): the emulator's image started by Testcontainers,
// as LocalStack and most shops start a service in tests, waited for on an HTTP answer of its health endpoint (not the
// image's HEALTHCHECK: podman without systemd never runs one, docs/docker.md#healthcheck), handing out labelled
// sessions. `testcontainers` (10.x: 11 needs Node 22) is an optional peer dependency of the package: the app installs
// it when it uses this module, which is the only one that imports it.

/** What this module uses of the `testcontainers` package (the package itself by default; a stand-in in a test). */
export type TestcontainersModule = { GenericContainer: typeof GenericContainer; Wait: typeof Wait };

/** The port the image serves on (docs/docker.md). */
const IMAGE_PORT = 4010;

export interface SandboxContainerOptions {
  /** The image (default `service-sandbox:<VERSION>`, the kit's own version, as docs/docker.md tags it). */
  image?: string;
  /** Environment of the container: the server's settings (docs/configuration.md), e.g. `{ CLOCK: '2026-03-01T12:00:00Z' }`. */
  env?: Record<string, string>;
  /** The admin token, when `env` sets ADMIN_TOKEN. */
  adminToken?: string;
  startupTimeoutMs?: number;
  /** The testcontainers module (default: the installed package). */
  testcontainers?: TestcontainersModule;
}

/** A session of the container: its client, and `end()`. */
export type ContainerSession = SandboxClient & { session: Session; end(): Promise<void> };

export interface StartedSandboxContainer extends AsyncDisposable {
  /** `http://host:mappedPort`. */
  url: string;
  /** A client of the container's root sandbox. */
  client: SandboxClient;
  /** A new session (docs/sessions.md) and its client; `end()` ends it. */
  session(options?: CreateSessionOptions): Promise<ContainerSession>;
  /** End the sessions this handed out that are still live, then stop the container (`await using` does too). */
  stop(): Promise<void>;
}

/** The default image: the one docs/docker.md builds, tagged with the kit's version. */
export const DEFAULT_IMAGE = `service-sandbox:${VERSION}`;

/**
 * The dotted name the container is reached by, when the Docker daemon is not local (TESTCONTAINERS_HOST_OVERRIDE, or
 * DOCKER_HOST's host): the server answers only names it takes (docs/robustness.md#web-pages), so it is given that one
 * as ALLOWED_HOSTS. None for a local daemon, an IP address or a single-label name, which the server takes anyway.
 */
export function dockerHostName(env: Record<string, string | undefined>): string | undefined {
  let name = env.TESTCONTAINERS_HOST_OVERRIDE;
  if (!name && env.DOCKER_HOST && /^(tcp|https?):\/\//.test(env.DOCKER_HOST)) {
    try {
      name = new URL(env.DOCKER_HOST.replace(/^tcp:/, 'http:')).hostname;
    } catch {
      return undefined;
    }
  }
  if (!name) return undefined;
  name = name.toLowerCase().replace(/\.$/, '');
  return name.includes('.') && !/^\d{1,3}(\.\d{1,3}){3}$/.test(name) && !name.startsWith('[') && !name.endsWith('.localhost') ? name : undefined;
}

/** Start the emulator's image and wait until it answers. */
export async function startSandboxContainer(options: SandboxContainerOptions = {}): Promise<StartedSandboxContainer> {
  const testcontainers = options.testcontainers ?? { GenericContainer, Wait };
  let container = new testcontainers.GenericContainer(options.image ?? DEFAULT_IMAGE)
    .withExposedPorts(IMAGE_PORT)
    .withWaitStrategy(testcontainers.Wait.forHttp('/_emulator/health', IMAGE_PORT).forStatusCode(200));
  const hostName = dockerHostName(process.env);
  const env = { ...(hostName ? { ALLOWED_HOSTS: hostName } : {}), ...options.env };
  if (Object.keys(env).length > 0) container = container.withEnvironment(env);
  if (options.startupTimeoutMs !== undefined) container = container.withStartupTimeout(options.startupTimeoutMs);
  const started = await container.start();
  const url = `http://${started.getHost()}:${started.getMappedPort(IMAGE_PORT)}`;
  const client = createSandboxClient({ baseUrl: url, ...(options.adminToken ? { adminToken: options.adminToken } : {}) });
  const live = new Set<string>();
  const stop = async () => {
    await Promise.allSettled([...live].map((id) => client.endSession(id)));
    live.clear();
    await started.stop();
  };
  return {
    url,
    client,
    async session(sessionOptions = {}) {
      const session = await client.createSession(sessionOptions);
      live.add(session.id);
      return Object.assign(client.forSession(session), {
        session,
        async end() {
          if (!live.delete(session.id)) return;
          await client.endSession(session.id);
        },
      });
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
