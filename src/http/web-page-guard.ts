import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { errors } from '../core/errors.js';

// Web pages may not drive the sandbox (docs/robustness.md#web-pages). Developers keep the emulator running while they
// browse, and it has no credentials of its own on the control plane: a page of another origin could otherwise reset it
// with a bodyless form POST, and a page whose DNS name was rebound to 127.0.0.1 could read and call every route.
//
// - Host: a request must name this server by an IP address, `localhost` (or a `*.localhost` name), a single-label name
//   (a Docker or compose service such as `sandbox`), Docker's and Podman's host names, the `--host` value, or a name
//   `--allowed-hosts` lists. A rebinding page names the attacker's own domain, which is none of these.
// - Origin: a control-plane request sent by a browser for a page of another origin is refused, unless it is a plain
//   navigation (a link followed to the dashboard) to a route that changes nothing. The browser's `Sec-Fetch-Site` says
//   so when it sends one; else an `Origin` other than the server's own. Clients that are not browsers send neither
//   header, and the dashboard and /docs are same-origin. The route is the one the router matched, so a path written
//   `/%5Femulator/reset` is judged as `/_emulator/reset`.

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Names containers use for the machine they run on (Docker Desktop, Podman). */
const CONTAINER_HOST_NAMES = new Set(['host.docker.internal', 'gateway.docker.internal', 'host.containers.internal']);
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** The host name of a Host header or an origin's authority, lower-cased, without port, brackets kept off IPv6. */
export function hostNameOf(authority: string): string {
  const value = authority.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end > 0 ? value.slice(0, end + 1) : value;
  }
  const colon = value.lastIndexOf(':');
  const name = colon >= 0 ? value.slice(0, colon) : value;
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** docs/robustness.md#web-pages: whether a Host header's name is one this server answers to. */
export function isAllowedHost(name: string, config: Pick<Config, 'host'> & { allowedHosts?: readonly string[] }): boolean {
  if (name === '') return true;
  if (name.startsWith('[') || IPV4.test(name)) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (!name.includes('.')) return true;
  if (CONTAINER_HOST_NAMES.has(name) || name === config.host.toLowerCase()) return true;
  return (config.allowedHosts ?? []).some((entry) => entry === '*' || entry === name || (entry.startsWith('.') && (name.endsWith(entry) || name === entry.slice(1))));
}

/** Route config of a GET that changes state (the listen relay re-points every webhook endpoint; a stream takes a slot). */
export const CHANGES_STATE = { changesState: true } as const;

function isControlPlane(request: FastifyRequest): boolean {
  // the route the router matched (decoded, and without a session's /_sessions/{id} prefix); a path no route matches
  // changes nothing
  return request.routeOptions.url?.startsWith('/_emulator') ?? false;
}

/** Whether a page of another origin may send this: a followed link to a page that changes nothing. */
function isHarmlessNavigation(request: FastifyRequest): boolean {
  const config = request.routeOptions.config as { changesState?: boolean } | undefined;
  return SAFE_METHODS.has(request.method) && request.headers['sec-fetch-mode'] === 'navigate' && config?.changesState !== true;
}

/** host:port with the scheme's default port spelled out, lower-cased. */
function authorityOf(host: string, protocol: string): string {
  const name = hostNameOf(host);
  const port = host.trim().slice(host.trim().toLowerCase().lastIndexOf(name) + name.length).replace(/^\.?:/, '');
  return `${name}:${port === '' ? (protocol === 'https:' ? '443' : '80') : port}`;
}

/** The page's origin when a browser sent this request for a page of another origin; undefined otherwise. */
function foreignPage(request: FastifyRequest): string | undefined {
  const site = request.headers['sec-fetch-site'];
  // the browser's own verdict, when it gives one (it holds behind a proxy that rewrites Host)
  if (site === 'same-origin' || site === 'none') return undefined;
  if (site === 'cross-site' || site === 'same-site') return typeof request.headers.origin === 'string' ? request.headers.origin : `a ${site} page`;
  const origin = request.headers.origin;
  if (typeof origin !== 'string' || origin === '') return undefined;
  if (origin === 'null') return 'null';
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return origin;
  }
  const host = request.headers.host ?? '';
  return authorityOf(url.host, url.protocol) === authorityOf(host, url.protocol) ? undefined : origin;
}

export function registerWebPageGuard(app: FastifyInstance, config: Config): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const host = request.headers.host;
    if (host !== undefined && !isAllowedHost(hostNameOf(host), config)) {
      const name = hostNameOf(host).slice(0, 100);
      done(
        errors.forbidden(
          `Host ${name} is not a name this server answers to: it takes IP addresses, localhost and single-label names, a guard against ` +
            `DNS rebinding (docs/robustness.md#web-pages). Start it with --allowed-hosts ${name} (ALLOWED_HOSTS) to take this name`,
        ),
      );
      return;
    }
    if (isControlPlane(request) && !isHarmlessNavigation(request)) {
      const page = foreignPage(request);
      if (page !== undefined) {
        done(
          errors.forbidden(
            `A web page of another origin (${page.slice(0, 100)}) may not change this sandbox (docs/robustness.md#web-pages); ` +
              'call the control plane from tests, scripts, the dashboard or curl',
          ),
        );
        return;
      }
    }
    done();
  });
}
