import { createSandboxClient, type CreateSessionOptions, type SandboxClient, type Session } from './client.js';

// `service-sandbox/testcontainers` (docs/clients.md#testcontainers): the emulator's image started by Testcontainers,
// as LocalStack and most shops start a service in tests, waited for on its health endpoint (the one the image's
// HEALTHCHECK calls), handing out labelled sessions. `testcontainers` (10.x: 11 needs Node 22) is the app's own
// dev dependency, not the package's: it is loaded here only when a container is started, and only what this
// module calls of it is typed below.

/** What this module uses of the `testcontainers` package. */
export interface TestcontainersModule {
  GenericContainer: new (image: string) => GenericContainerLike;
  Wait: { forHttp(path: string, port: number): unknown; forHealthCheck(): unknown };
}

interface GenericContainerLike {
  withExposedPorts(...ports: number[]): GenericContainerLike;
  withEnvironment(environment: Record<string, string>): GenericContainerLike;
  withWaitStrategy(strategy: unknown): GenericContainerLike;
  withStartupTimeout(ms: number): GenericContainerLike;
  start(): Promise<StartedContainerLike>;
}

interface StartedContainerLike {
  getHost(): string;
  getMappedPort(port: number): number;
  stop(): Promise<unknown>;
}

/** The port the image serves on (docs/docker.md). */
const IMAGE_PORT = 4010;

export interface SandboxContainerOptions {
  /** The image (default `service-sandbox`, as docs/docker.md builds it). */
  image?: string;
  /** Environment of the container: the server's settings (docs/configuration.md), e.g. `{ CLOCK: '2026-03-01T12:00:00Z' }`. */
  env?: Record<string, string>;
  /** The admin token, when `env` sets ADMIN_TOKEN. */
  adminToken?: string;
  /**
   * `http` (default): wait until GET /_emulator/health answers 200 through the mapped port; `healthcheck`: wait on the
   * image's HEALTHCHECK status (needs a runtime that runs healthchecks, as Docker does).
   */
  waitFor?: 'http' | 'healthcheck';
  startupTimeoutMs?: number;
  /** The testcontainers module itself (default: `import('testcontainers')`). */
  testcontainers?: TestcontainersModule;
}

/** A session of the container: its client, and `end()`. */
export type ContainerSession = SandboxClient & { session: Session; end(): Promise<void> };

export interface StartedSandboxContainer {
  /** `http://host:mappedPort`. */
  url: string;
  /** A client of the container's root sandbox. */
  client: SandboxClient;
  /** A new session (docs/sessions.md) and its client; `end()` ends it. */
  session(options?: CreateSessionOptions): Promise<ContainerSession>;
  /** End the sessions this handed out that are still live, then stop the container. */
  stop(): Promise<void>;
}

async function loadTestcontainers(): Promise<TestcontainersModule> {
  const name = 'testcontainers'; // not a dependency of this package: resolved from the app's node_modules
  try {
    const loaded = (await import(name)) as TestcontainersModule & { default?: TestcontainersModule };
    return loaded.GenericContainer ? loaded : (loaded.default as TestcontainersModule);
  } catch (error) {
    throw new Error(`service-sandbox/testcontainers needs the testcontainers package: npm install --save-dev testcontainers@10 (${String(error)})`);
  }
}

/** Start the emulator's image and wait until it answers. */
export async function startSandboxContainer(options: SandboxContainerOptions = {}): Promise<StartedSandboxContainer> {
  const { GenericContainer, Wait } = options.testcontainers ?? (await loadTestcontainers());
  let container = new GenericContainer(options.image ?? 'service-sandbox')
    .withExposedPorts(IMAGE_PORT)
    .withWaitStrategy(options.waitFor === 'healthcheck' ? Wait.forHealthCheck() : Wait.forHttp('/_emulator/health', IMAGE_PORT));
  if (options.env) container = container.withEnvironment(options.env);
  if (options.startupTimeoutMs !== undefined) container = container.withStartupTimeout(options.startupTimeoutMs);
  const started = await container.start();
  const url = `http://${started.getHost()}:${started.getMappedPort(IMAGE_PORT)}`;
  const client = createSandboxClient({ baseUrl: url, ...(options.adminToken ? { adminToken: options.adminToken } : {}) });
  const live = new Set<string>();
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
    async stop() {
      await Promise.allSettled([...live].map((id) => client.endSession(id)));
      live.clear();
      await started.stop();
    },
  };
}
