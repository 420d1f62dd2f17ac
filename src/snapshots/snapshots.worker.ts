import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { checkSnapshotFile, SnapshotRefusal, type CheckAnswer } from './snapshots.check.js';

// The worker thread that checks uploaded snapshot files (snapshots.check.ts), with its own SQLite connection, so a
// slow or hostile file never holds the server's event loop (docs/robustness.md#hostile-files). Started to serve, it
// checks each file its parent posts and answers each; started with one file and a port (the synchronous start-up
// check), it answers once on that port and wakes the parent through the shared word.

interface Job {
  bytes: Uint8Array;
  /** Tests only (CheckOptions.hold): wait until word 0 is no longer 0. */
  hold?: SharedArrayBuffer;
}

function check({ bytes, hold }: Job): CheckAnswer {
  if (hold) Atomics.wait(new Int32Array(hold), 0, 0);
  try {
    return { ok: true, file: checkSnapshotFile(bytes) };
  } catch (error) {
    return error instanceof SnapshotRefusal ? { ok: false, refusal: error.message } : { ok: false, failure: (error as Error).message };
  }
}

const data = workerData as { serve?: true; bytes?: Uint8Array; port?: MessagePort; done?: SharedArrayBuffer };
if (data.serve) {
  parentPort!.on('message', (job: Job) => parentPort!.postMessage(check(job)));
} else {
  data.port!.postMessage(check({ bytes: data.bytes! }));
  const done = new Int32Array(data.done!);
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
}
