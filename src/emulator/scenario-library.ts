import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { SHIPPED_SCENARIOS, type Config } from '../config.js';
import { errors } from '../core/errors.js';
import { loadScenario, ScenarioFileError, SCENARIO_LIMITS, type LoadedScenario } from '../scenarios/scenario.load.js';
import { readUserFile, UserFileError } from '../lib/user-file.js';
import { playGroups } from './scenario-play.service.js';

// The scenarios a server knows by name (docs/sessions.md#scenarios): the files shipped in the package's `scenarios/`
// folder and those of the folder given with --scenarios. The folders are looked at each time they are listed or used,
// so a file edited while the server runs is played as it now is, and a bad one is listed with its error rather than
// stopping start-up (docs/decisions.md#scenario-folder). A file is parsed again only when its size, modification
// time or inode changed: parsing every file on every call held the event loop 34-60 ms on a busy machine.

export type ScenarioSource = 'shipped' | 'folder';

/** A scenario file as GET /_emulator/scenarios lists it. */
export interface ScenarioEntry {
  /** The file's `name`; a file that cannot be read as a scenario: its file name without the extension. */
  name: string;
  description: string | null;
  /** How many steps; null for a broken file. */
  steps: number | null;
  source: ScenarioSource;
  /** The file's name in its folder. */
  file: string;
  /** Why the file cannot be used (its line and column when it has them); null for a good one. */
  error: { message: string; line: number | null; column: number | null } | null;
}

/** A scenario found by name, ready for a session. */
export interface FoundScenario {
  entry: ScenarioEntry;
  loaded: LoadedScenario;
  /** The file's absolute path: a `fixtures` path in it is relative to its folder. */
  filePath: string;
}

const SCENARIO_FILE = /\.(ya?ml|json)$/i;
/** Most files read from one folder: a folder is a person's set of stories, not a data set. */
export const MAX_FOLDER_FILES = 200;

interface Candidate {
  entry: ScenarioEntry;
  loaded: LoadedScenario | null;
  filePath: string;
}

function filesOf(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((item) => item.isFile() && SCENARIO_FILE.test(item.name))
      .map((item) => item.name)
      .sort()
      .slice(0, MAX_FOLDER_FILES);
  } catch {
    return []; // a folder that went away lists nothing; its files are not the server's
  }
}

/**
 * Each file as last read, by path, with what identifies its content on disk. Per process, like the schema image
 * (db/connection.ts): files, not a sandbox's state. Bounded by the folders' files (MAX_FOLDER_FILES each); a path no
 * listing finds any more is dropped.
 */
const readBefore = new Map<string, { stamp: string; candidate: Candidate }>();

/** The file's candidate, from readBefore when the file is unchanged; the entry is a copy, as callers amend it. */
function readOnce(dir: string, file: string, source: ScenarioSource): Candidate {
  const filePath = path.join(dir, file);
  let stamp: string;
  try {
    const stat = statSync(filePath, { bigint: true });
    stamp = `${source}:${stat.size}:${stat.mtimeNs}:${stat.ino}`;
  } catch {
    return read(dir, file, source); // gone meanwhile: read() says so
  }
  let kept = readBefore.get(filePath);
  if (kept?.stamp !== stamp) {
    kept = { stamp, candidate: read(dir, file, source) };
    readBefore.set(filePath, kept);
  }
  return { ...kept.candidate, entry: { ...kept.candidate.entry } };
}

function read(dir: string, file: string, source: ScenarioSource): Candidate {
  const filePath = path.join(dir, file);
  const stem = file.replace(SCENARIO_FILE, '');
  const broken = (message: string, line: number | null = null, column: number | null = null): Candidate => ({
    entry: { name: stem, description: null, steps: null, source, file, error: { message, line, column } },
    loaded: null,
    filePath,
  });
  let text: string;
  try {
    text = readUserFile(filePath, SCENARIO_LIMITS.bytes).toString('utf8');
  } catch (error) {
    if (!(error instanceof UserFileError)) throw error;
    return broken(error.code === 'TOO_LARGE' ? 'the file is larger than 1 MiB, the most a scenario file may be' : `cannot read the file: ${error.code === 'NOT_A_FILE' ? error.message : error.code}`);
  }
  try {
    const loaded = loadScenario(text, file);
    const { scenario } = loaded;
    return {
      entry: { name: scenario.name, description: scenario.description ?? null, steps: playGroups(loaded).length, source, file, error: null },
      loaded,
      filePath,
    };
  } catch (error) {
    if (error instanceof ScenarioFileError) return broken(error.message, error.line ?? null, error.column ?? null);
    throw error;
  }
}

function candidates(config: Pick<Config, 'scenarios'>): Candidate[] {
  const found: Candidate[] = [];
  const folders: Array<[string, ScenarioSource]> = [[SHIPPED_SCENARIOS, 'shipped']];
  if (config.scenarios) folders.push([path.resolve(config.scenarios), 'folder']);
  const taken = new Map<string, Candidate>();
  const seen = new Set<string>();
  for (const [dir, source] of folders) {
    for (const file of filesOf(dir)) {
      const candidate = readOnce(dir, file, source);
      seen.add(candidate.filePath);
      const earlier = taken.get(candidate.entry.name);
      // docs/decisions.md#scenario-folder: a name is one scenario; the shipped file, then the first file by name, keeps it
      if (earlier && candidate.loaded) {
        candidate.entry.error = {
          message: `the name "${candidate.entry.name}" is already the ${earlier.entry.source === 'shipped' ? 'shipped scenario' : 'scenario'} of ${earlier.entry.file}; give this file another name`,
          line: null,
          column: null,
        };
        candidate.loaded = null;
      } else if (candidate.loaded) {
        taken.set(candidate.entry.name, candidate);
      }
      found.push(candidate);
    }
  }
  for (const filePath of readBefore.keys()) if (!seen.has(filePath) && !filePath.startsWith(SHIPPED_SCENARIOS)) readBefore.delete(filePath);
  return found;
}

/** The shipped scenarios, then the --scenarios folder's, each folder by file name; broken files with their error. */
export function listScenarios(config: Pick<Config, 'scenarios'>): ScenarioEntry[] {
  return candidates(config).map((candidate) => candidate.entry);
}

/** The scenario named `name`: 404 when no file has that name, 400 when the file with that name is broken. */
export function findScenario(config: Pick<Config, 'scenarios'>, name: string, field = 'scenario'): FoundScenario {
  const all = candidates(config);
  const match = all.find((candidate) => candidate.loaded && candidate.entry.name === name) ?? all.find((candidate) => candidate.entry.name === name);
  if (!match) {
    const names = all.filter((candidate) => candidate.loaded).map((candidate) => candidate.entry.name);
    throw errors.notFound(
      `No scenario "${name}" on this server (GET /_emulator/scenarios lists them: ${names.length > 0 ? names.join(', ') : 'none'}); ` +
        'a scenario of your own goes in the folder of --scenarios, or send the file itself',
      [{ type: 'NotFound', fieldRef: field, message: `No scenario "${name}"` }],
    );
  }
  if (!match.loaded) {
    const { error } = match.entry;
    throw errors.invalid(`The scenario file ${match.entry.file} cannot be used: ${error?.message ?? 'it is broken'}`, [
      { type: 'InvalidValue', fieldRef: field, message: error?.message ?? 'broken' },
    ]);
  }
  return { entry: match.entry, loaded: match.loaded, filePath: match.filePath };
}
