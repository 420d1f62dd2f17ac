import { parentPort } from 'node:worker_threads';
import { loadScenario, ScenarioFileError } from './scenario.load.js';
import type { WorkerAnswer, WorkerJob } from './scenario.load-off-thread.js';

// The thread that reads scenario files a client sends (docs/decisions.md#scenario-limits): the YAML parser reads about a
// megabyte a second, so a 1 MiB file read on the main thread would hold every sandbox's requests for a second or more.
// It answers each job its parent posts; what it answers is plain data (a LoadedScenario is plain JSON by design).

function read({ text, file, hold }: WorkerJob): WorkerAnswer {
  if (hold) Atomics.wait(new Int32Array(hold), 0, 0);
  try {
    return { ok: true, loaded: loadScenario(text, file) };
  } catch (error) {
    if (error instanceof ScenarioFileError) return { ok: false, problems: [...error.problems] };
    return { ok: false, failure: (error as Error).message };
  }
}

parentPort!.on('message', (job: WorkerJob) => parentPort!.postMessage(read(job)));
