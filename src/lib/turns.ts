// Work written as steps (a generator that yields between two pieces of work), run either at once or a turn of the
// event loop at a time (docs/control-plane.md#big-states): big restores, resets and exports yield so that every
// other sandbox and the health check are answered meanwhile, while the same code runs at once where a caller needs
// the result in the same turn (the test kit, a new sandbox at start-up).

/** Work that yields where the event loop may take a turn, and returns T at its end. */
export type Steps<T = void> = Generator<void, T, void>;

/** Run every step now, in this turn. */
export function runNow<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** How long the steps run before a turn of the event loop is given, as the scheduler's slices (SLICE_MAX_MS). */
export const TURN_MS = 4;

/**
 * The process's work in turns, one piece after another (docs/control-plane.md#big-states): the piece taking its turns
 * now, then those waiting. They share one thread, so two at once would finish neither sooner; one at a time bounds
 * what they hold together (an export's file, the rows a save copied, a first session's database) to one's worth. One per
 * process, like the snapshot budget: the heap it protects is the process's.
 */
let lastInLine: Promise<void> = Promise.resolve();

/** Wait for every piece of work in turns before this one; the answer lets the next one go. */
async function takeYourTurn(): Promise<() => void> {
  const before = lastInLine;
  let done!: () => void;
  lastInLine = new Promise((resolve) => {
    done = resolve;
  });
  await before;
  return done;
}

/**
 * Run the steps with a turn of the event loop whenever TURN_MS have passed. Work that needs a turn waits first for the
 * work in turns before it, process-wide (work done within TURN_MS never waits). After each turn `stillWanted()` is
 * asked; when it answers with an error (the sandbox was closed meanwhile), the steps are ended (their `finally` blocks
 * run) and that error is thrown.
 */
export async function runInTurns<T>(steps: Steps<T>, stillWanted: () => Error | null = () => null): Promise<T> {
  let since = performance.now();
  let letNextGo: (() => void) | undefined;
  try {
    for (;;) {
      const next = steps.next();
      if (next.done) return next.value;
      if (performance.now() - since < TURN_MS) continue;
      letNextGo ??= await takeYourTurn();
      await new Promise((resolve) => setImmediate(resolve));
      const stop = stillWanted();
      if (stop) {
        steps.return(undefined as T);
        throw stop;
      }
      since = performance.now();
    }
  } finally {
    letNextGo?.();
  }
}
