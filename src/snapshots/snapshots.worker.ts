import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { checkSnapshotFile, ROWS_PER_PIECE, SnapshotRefusal, type CheckAnswer, type ServedMessage } from './snapshots.check.js';

// The worker thread that checks uploaded snapshot files (snapshots.check.ts), with its own SQLite connection, so a
// slow or hostile file never holds the server's event loop (docs/robustness.md#hostile-files). Started to serve, it
// checks each file its parent posts and answers each; started with one file and a port (the synchronous start-up
// check), it answers once on that port and wakes the parent through the shared word.

interface Job {
  bytes: Uint8Array;
  /** Tests only (CheckOptions.hold): wait until word 0 is no longer 0. */
  hold?: SharedArrayBuffer;
  /** Word 0 counts the messages the parent has taken in (served checks only). */
  taken?: SharedArrayBuffer;
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
/**
 * A served check's answer, a piece at a time (docs/robustness.md#hostile-files): taking in the rows of a large file in
 * one message held the parent's event loop for seconds (3.7 s for 341,000 rows), so the rows go in pieces of
 * ROWS_PER_PIECE and the next piece leaves only once the parent has taken in the last one, each in its own turn.
 */
function serve(job: Job): void {
  const answer = check(job);
  const taken = new Int32Array(job.taken!);
  let sent = 0;
  const send = (message: ServedMessage) => {
    parentPort!.postMessage(message);
    sent += 1;
    Atomics.wait(taken, 0, sent - 1);
  };
  if (!answer.ok) return send({ kind: 'answer', answer });
  const { tables, ...head } = answer.file;
  send({ kind: 'head', head, tables: tables.map(({ name, columns, key }) => ({ name, columns, key })) });
  tables.forEach((table, index) => {
    for (let at = 0; at < table.rows.length; at += ROWS_PER_PIECE) send({ kind: 'rows', table: index, rows: table.rows.slice(at, at + ROWS_PER_PIECE) });
  });
  send({ kind: 'end' });
}

if (data.serve) {
  parentPort!.on('message', serve);
} else {
  data.port!.postMessage(check({ bytes: data.bytes! }));
  const done = new Int32Array(data.done!);
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
}
