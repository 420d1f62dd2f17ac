import { VERSION } from '../version.js';

// The kit's version against the server's (docs/clients.md#versions): the first time the kit talks to a server URL it
// reads `GET /_emulator/health` (`{ status, now, version }`) and, when the versions differ, warns once with
// process.emitWarning. What it remembers is per process by nature (one warning per server URL for the whole test
// run), so it is this module's set, not a sandbox's state.

const checked = new Map<string, Promise<void>>();

/** The warning's code, for `process.on('warning', ...)` filters and `--disable-warning=SERVICE_SANDBOX_VERSION`. */
export const VERSION_WARNING_CODE = 'SERVICE_SANDBOX_VERSION';

/** The server of a base URL: a session's `/_sessions/{id}` suffix taken off. */
export function serverUrlOf(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/_sessions\/[^/]+$/, '');
}

/**
 * Read the server's version once per server URL and warn when it is not the kit's. Never fails: a server that does
 * not answer is the caller's next request's problem, with its own error.
 */
export function checkServerVersion(baseUrl: string, options: { fetch?: typeof fetch; adminToken?: string | undefined; signal?: AbortSignal } = {}): Promise<void> {
  const server = serverUrlOf(baseUrl);
  let check = checked.get(server);
  if (!check) {
    check = readVersion(server, options).then((version) => {
      if (version !== undefined && version !== VERSION) {
        process.emitWarning(
          `service-sandbox kit ${VERSION} talks to a server of version ${version} at ${server}: install the same version of both (docs/clients.md#versions)`,
          { code: VERSION_WARNING_CODE },
        );
      }
    });
    checked.set(server, check);
  }
  return check;
}

async function readVersion(server: string, options: { fetch?: typeof fetch; adminToken?: string | undefined; signal?: AbortSignal }): Promise<string | undefined> {
  try {
    const response = await (options.fetch ?? globalThis.fetch)(`${server}/_emulator/health`, {
      headers: options.adminToken ? { authorization: `Bearer ${options.adminToken}` } : {},
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    const { version } = (await response.json()) as { version?: unknown };
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}
