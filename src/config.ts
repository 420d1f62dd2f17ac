import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { z } from 'zod';
import { isCalendarDay } from './lib/calendar.js';
import { inClockRange } from './lib/clock.js';
import { isHttpUrl } from './lib/http-url.js';

// One zod schema for every flag and environment variable (docs/configuration.md). A flag wins over its variable.

// The package root, whether running from src/ (tests) or dist/src/ (built).
export const PROJECT_ROOT = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(start: string): string {
  let dir = start;
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}
export const DEFAULT_FIXTURES = path.join(PROJECT_ROOT, 'fixtures', 'default.json');
/** The scenario files shipped with the package (docs/sessions.md#scenarios), beside `fixtures/`. */
export const SHIPPED_SCENARIOS = path.join(PROJECT_ROOT, 'scenarios');

/**
 * The most a fixtures file may hold (docs/configuration.md#fixtures-file-format): `--fixtures` / `FIXTURES`, read at
 * start-up and by `sign` and `check-receiver` (the default file is 27 KiB).
 */
export const FIXTURES_FILE_LIMIT = 64 * 1024 * 1024;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The seed of ids when `--seed` is not given (docs/configuration.md). */
export const DEFAULT_SEED = 'service-sandbox';

const ALLOWED_HOSTS_ACCEPTS = 'accepts a comma-separated list of host names (a leading dot takes every name under it; * takes any)';

export const configSchema = z.object({
  port: z.coerce
    .number({ error: 'accepts an integer port 0-65535' })
    .int('accepts an integer port 0-65535')
    .min(0, 'accepts an integer port 0-65535')
    .max(65535, 'accepts an integer port 0-65535')
    .default(4010),
  host: z.string().min(1, 'accepts a host name or IP address').default('127.0.0.1'),
  db: z
    .string()
    .min(1, 'accepts :memory: or a file path')
    .refine((value) => value === ':memory:' || !isDirectory(value), { message: 'accepts :memory: or a file path; this path is a directory' })
    .refine((value) => value === ':memory:' || isDirectory(path.dirname(path.resolve(value))), {
      message: 'accepts :memory: or a file path in an existing directory; the directory does not exist',
    })
    .default(':memory:'),
  fixtures: z.string().min(1, 'accepts a path to a fixtures JSON file').default(DEFAULT_FIXTURES),
  // Absent: the ids of DEFAULT_SEED, and sessions draw from a seed of the start's own (docs/sessions.md#ids).
  seed: z.string().min(1, 'accepts any non-empty string').optional(),
  // Omitted: a database file resumes its stored clock, a new one starts in real time (docs/configuration.md#clock).
  clock: z
    .string()
    .refine((value) => value === 'realtime' || isIsoInstant(value), {
      message: 'accepts "realtime" or an ISO 8601 instant with a real calendar date and time, such as 2026-03-01T12:00:00.000Z, up to 9999-12-31T23:59:59.999Z',
    })
    .optional(),
  webhookUrl: z
    .string()
    .refine(isHttpUrl, { message: 'accepts an http:// or https:// URL' })
    .optional(),
  logLevel: z.enum(LOG_LEVELS, { error: `accepts one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  adminToken: z.string().min(1, 'accepts a non-empty token').optional(),
  // docs/robustness.md#web-pages: host names requests may name beyond IP addresses, localhost and single-label names
  // (a list given as text is split; a parsed config, re-read for a session, passes as the list it is)
  allowedHosts: z
    .preprocess(
      (value) => {
        if (typeof value !== 'string') return value;
        const entries = value.split(',').map((entry) => entry.trim().toLowerCase()).filter((entry) => entry !== '');
        return entries.length > 0 ? entries : value;
      },
      z.array(z.string().regex(/^(?:\*|\.?[a-z0-9-]+(?:\.[a-z0-9-]+)*)$/, ALLOWED_HOSTS_ACCEPTS), { error: ALLOWED_HOSTS_ACCEPTS }),
    )
    .default([]),
  journalSize: z.coerce
    .number({ error: 'accepts an integer 0-100000' })
    .int('accepts an integer 0-100000')
    .min(0, 'accepts an integer 0-100000')
    .max(100000, 'accepts an integer 0-100000')
    .default(1000),
  webhookTimeoutMs: z.coerce
    .number({ error: 'accepts an integer number of milliseconds 1-600000' })
    .int('accepts an integer number of milliseconds 1-600000')
    .min(1, 'accepts an integer number of milliseconds 1-600000')
    .max(600000, 'accepts an integer number of milliseconds 1-600000')
    .default(10000),
  // docs/architecture.md#the-read-cache: answers of hot reads kept while the database is unchanged (db/read-cache.ts);
  // `off` builds every answer (a diagnostic: the benchmark's uncached figure, or ruling the cache out).
  readCache: z.enum(['on', 'off'], { error: 'accepts on or off' }).default('on'),
  // A new sandbox starts from an exported snapshot instead of the fixtures (docs/configuration.md#snapshot).
  snapshot: z
    .string()
    .min(1, 'accepts the path of a file exported by GET /_emulator/snapshots/{name}/export')
    .refine((value) => isFile(value), { message: 'accepts the path of a file exported by GET /_emulator/snapshots/{name}/export; no such file' })
    .optional(),
  // A folder of the user's scenario files, listed and played beside the shipped ones (docs/sessions.md#scenarios).
  // Its files are read when they are listed or used, so an edited file needs no restart, and a bad one is listed with
  // its error instead of stopping start-up (docs/decisions.md#scenario-folder).
  scenarios: z
    .string()
    .min(1, 'accepts the path of a directory of scenario files (.yaml, .yml, .json)')
    .refine((value) => isDirectory(value), { message: 'accepts the path of a directory of scenario files (.yaml, .yml, .json); no such directory' })
    .optional(),
  // Sessions (docs/sessions.md#limits): isolated sandboxes under /_sessions/{id} on the same port.
  maxSessions: z.coerce
    .number({ error: 'accepts an integer 0-1000' })
    .int('accepts an integer 0-1000')
    .min(0, 'accepts an integer 0-1000')
    .max(1000, 'accepts an integer 0-1000')
    .default(64),
  sessionIdleTimeout: z.coerce
    .number({ error: 'accepts an integer number of seconds 1-86400' })
    .int('accepts an integer number of seconds 1-86400')
    .min(1, 'accepts an integer number of seconds 1-86400')
    .max(86400, 'accepts an integer number of seconds 1-86400')
    .default(900),
});

export type Config = z.infer<typeof configSchema>;

/**
 * An ISO 8601 instant whose date and time exist and that the emulated clock can hold: Date.parse alone rolls
 * 2026-02-30 over to March 2 and accepts 24:00, so each field is checked against the calendar (2026-02-30,
 * 2026-13-01 and 25:00 are refused, years as written), and the instant must lie in 0000-01-01T00:00:00.000Z to
 * 9999-12-31T23:59:59.999Z once its offset is applied (docs/decisions.md#clock-range).
 */
export function isIsoInstant(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  if (!isCalendarDay(year, month, day)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (match[9] !== undefined && (Number(match[9]) > 23 || Number(match[10]) > 59)) return false;
  const ms = Date.parse(value);
  return !Number.isNaN(ms) && inClockRange(ms);
}

function isFile(target: string): boolean {
  try {
    return statSync(target).isFile();
  } catch {
    return false;
  }
}

function isDirectory(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

/** Flag name, environment variable and config key for each option: the README table mirrors this. */
export const OPTIONS = [
  { flag: '--port', env: 'PORT', key: 'port' },
  { flag: '--host', env: 'HOST', key: 'host' },
  { flag: '--db', env: 'DB_PATH', key: 'db' },
  { flag: '--fixtures', env: 'FIXTURES', key: 'fixtures' },
  { flag: '--seed', env: 'SEED', key: 'seed' },
  { flag: '--clock', env: 'CLOCK', key: 'clock' },
  { flag: '--webhook-url', env: 'WEBHOOK_URL', key: 'webhookUrl' },
  { flag: '--log-level', env: 'LOG_LEVEL', key: 'logLevel' },
  { flag: '--admin-token', env: 'ADMIN_TOKEN', key: 'adminToken' },
  { flag: '--allowed-hosts', env: 'ALLOWED_HOSTS', key: 'allowedHosts' },
  { flag: '--journal-size', env: 'JOURNAL_SIZE', key: 'journalSize' },
  { flag: '--webhook-timeout-ms', env: 'WEBHOOK_TIMEOUT_MS', key: 'webhookTimeoutMs' },
  { flag: '--read-cache', env: 'READ_CACHE', key: 'readCache' },
  { flag: '--snapshot', env: 'SNAPSHOT', key: 'snapshot' },
  { flag: '--scenarios', env: 'SCENARIOS', key: 'scenarios' },
  { flag: '--max-sessions', env: 'MAX_SESSIONS', key: 'maxSessions' },
  { flag: '--session-idle-timeout', env: 'SESSION_IDLE_TIMEOUT', key: 'sessionIdleTimeout' },
] as const;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * An environment variable's value; undefined when it is not set. Set but empty (`ADMIN_TOKEN=` from a CI secret that
 * is missing) is refused as the empty flag is (docs/configuration.md): ignoring it would start the server without what
 * the variable was meant to give it, a control plane open while the job believes it is protected.
 */
export function nonEmptyEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  if (value === '') throw new ConfigError(emptyEnvMessage(name));
  return value;
}

export function emptyEnvMessage(name: string): string {
  return `${name} is set but empty: give it a value, or unset it`;
}

/** The options that take an integer: plain digits only, as the API reads an integer query parameter (no 0x1196, 1e3 or " 4502"). */
const INTEGER_KEYS = ['port', 'journalSize', 'webhookTimeoutMs', 'maxSessions', 'sessionIdleTimeout'] as const satisfies ReadonlyArray<keyof Config>;

/** Parse argv (without node and script) and the environment into a Config; throws ConfigError with one line. */
export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config {
  const raw: Record<string, string> = {};
  for (const option of OPTIONS) {
    // docs/configuration.md: an empty variable counts as unset (compose's `WEBHOOK_URL: ${WEBHOOK_URL:-}`), but for
    // ADMIN_TOKEN, whose emptiness would leave the control plane open while the job believes it protected
    const value = option.key === 'adminToken' ? nonEmptyEnv(env, option.env) : env[option.env] || undefined;
    if (value !== undefined) raw[option.key] = value;
  }
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const option = OPTIONS.find((candidate) => candidate.flag === name);
    if (!option) throw new ConfigError(`unknown option ${name}; accepted: ${OPTIONS.map((o) => o.flag).join(', ')}`);
    const value = inline ?? argv[i + 1];
    if (inline === undefined) i += 1;
    // `--seed --port 4503`: the next flag is not this one's value (a value that starts with -- goes as --seed=--x)
    if (value === undefined || (inline === undefined && value.startsWith('--'))) throw new ConfigError(`${option.flag} needs a value`);
    raw[option.key] = value;
  }
  const invalid = (key: string, message: string) => {
    const option = OPTIONS.find((candidate) => candidate.key === key);
    const given = raw[key];
    return new ConfigError(`invalid ${option ? `${option.flag} / ${option.env}` : key}${given !== undefined ? ` "${given}"` : ''}: ${message}`);
  };
  for (const key of INTEGER_KEYS) {
    const value = raw[key];
    // the option's own message: its schema refuses a value that is not a number
    if (value !== undefined && !/^[0-9]+$/.test(value)) throw invalid(key, configSchema.shape[key].safeParse('x').error!.issues[0]!.message);
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw invalid(String(issue.path[0]), issue.message);
  }
  return result.data;
}

/** Start state of the clock from `--clock` (omitted: real time, unless a database file stored a clock). */
export function clockStart(config: Config): { mode: 'realtime' } | { mode: 'frozen'; atMs: number } {
  return config.clock === undefined || config.clock === 'realtime' ? { mode: 'realtime' } : { mode: 'frozen', atMs: Date.parse(config.clock) };
}
