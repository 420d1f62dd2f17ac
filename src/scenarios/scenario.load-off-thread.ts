import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { errors } from '../core/errors.js';
import { createJobQueue } from '../lib/job-queue.js';
import { ScenarioFileError, type LoadedScenario, type ScenarioProblem } from './scenario.load.js';

// Reading a client's scenario off the main thread, bounded in time (docs/decisions.md#scenario-limits): the server
// reads scenario text sent to POST /_emulator/sessions here, so no file holds the event loop. The CLI reads its own
// files with loadScenario directly.

export interface WorkerJob {
  text: string;
  file: string;
  /** Tests only (ReadOptions.hold): the worker waits until word 0 of this shared array is no longer 0. */
  hold?: SharedArrayBuffer;
}

export interface ReadOptions {
  limitMs?: number;
  /** Tests only: hold the read on the worker until word 0 is set, to show the main thread goes on meanwhile. */
  hold?: Int32Array;
}

export type WorkerAnswer = { ok: true; loaded: LoadedScenario } | { ok: false; problems: ScenarioProblem[] } | { ok: false; failure: string };

/** How long one file may take: 10 s, far above the ~1-3 s a 1 MiB file takes on a loaded 2-core machine. */
export const SCENARIO_READ_LIMIT_MS = 10_000;

/**
 * The worker's entry: next to this module from source (tests), from tsc's output (dist/src), and next to the bundle as
 * dist/scenario.worker.js (scripts/bundle.mjs writes it there), as the snapshot check's worker is found.
 */
function workerEntry(): URL {
  return new URL(import.meta.url.endsWith('.ts') ? './scenario.worker.ts' : './scenario.worker.js', import.meta.url);
}

function startWorker(): Worker {
  // from source only the TypeScript loader among the parent's flags (a test runner's other hooks would load again)
  const execArgv = import.meta.url.endsWith('.ts') ? process.execArgv.filter((flag) => flag.includes('ts-loader')) : process.execArgv;
  const worker = new Worker(workerEntry(), { execArgv });
  worker.unref();
  return worker;
}

/** One idle reader kept for the next file (process-wide plumbing, like the snapshot check's; it holds no sandbox state). */
const idle: Worker[] = [];

/**
 * Reads wait their turn (docs/robustness.md#off-thread-work): one thread per core but the main thread's, and up to 64
 * waiting; a read joins the queue's end, and its time bound starts when it runs. Process-wide, like the idle reader.
 */
export const SCENARIO_READS = createJobQueue(Math.max(1, availableParallelism() - 1), 64);

/**
 * Read and check a scenario on a worker thread; a ScenarioFileError as loadScenario throws it, or past the bound. A
 * 429 when 64 reads are already waiting.
 */
export function loadScenarioOffThread(text: string, file: string, options: ReadOptions = {}): Promise<LoadedScenario> {
  return SCENARIO_READS.run(
    () => readOnWorker(text, file, options),
    () => errors.tooManyRequests(`${SCENARIO_READS.waiting} scenario files are already waiting to be read; send this one again in a moment`),
  );
}

function readOnWorker(text: string, file: string, { limitMs = SCENARIO_READ_LIMIT_MS, hold }: ReadOptions): Promise<LoadedScenario> {
  return new Promise((resolve, reject) => {
    const worker = idle.pop() ?? startWorker();
    worker.ref();
    const finish = (reusable: boolean) => {
      clearTimeout(timer);
      worker.removeListener('message', onMessage).removeListener('error', onError).removeListener('exit', onExit);
      worker.unref();
      if (reusable && idle.length === 0) idle.push(worker);
      else void worker.terminate();
    };
    const onMessage = (answer: WorkerAnswer) => {
      finish(true);
      if (answer.ok) resolve(answer.loaded);
      else if ('problems' in answer) reject(new ScenarioFileError(file, answer.problems));
      else reject(new Error(`the scenario could not be read: ${answer.failure}`));
    };
    const onError = (error: Error) => {
      finish(false);
      reject(new ScenarioFileError(file, [{ line: 1, column: 1, path: '$', message: `the file could not be read (${error.message})` }]));
    };
    const onExit = () => {
      finish(false);
      reject(new ScenarioFileError(file, [{ line: 1, column: 1, path: '$', message: 'the file could not be read (its reader stopped)' }]));
    };
    const timer = setTimeout(() => {
      finish(false);
      reject(new ScenarioFileError(file, [{ line: 1, column: 1, path: '$', message: `the file took longer than ${limitMs / 1000} s to read; make it smaller` }]));
    }, limitMs);
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.postMessage({ text, file, ...(hold ? { hold: hold.buffer as SharedArrayBuffer } : {}) } satisfies WorkerJob);
  });
}
