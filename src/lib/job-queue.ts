// Off-thread work a client starts (a scenario read, a snapshot check) waits its turn here, so a burst of requests
// never starts a thread each (docs/robustness.md#off-thread-work): 100 scenario texts of 33 bytes sent at once had
// started 100 threads, and the root's health check went unanswered for 8 s while they competed for two cores.

export interface JobQueue {
  /**
   * Run `start` once fewer than the queue's concurrency are running, in arrival order. With `maxWaiting` jobs already
   * waiting, `refuse()` is thrown at once instead. A job's own time bound belongs inside `start`, so it counts from
   * when the job runs, not from when it joined.
   */
  run<T>(start: () => Promise<T>, refuse: () => Error): Promise<T>;
  /** Jobs running and waiting now. */
  readonly running: number;
  readonly waiting: number;
}

export function createJobQueue(concurrency: number, maxWaiting: number): JobQueue {
  let running = 0;
  const waiting: Array<() => void> = [];
  const next = () => {
    running -= 1;
    waiting.shift()?.();
  };
  return {
    run<T>(start: () => Promise<T>, refuse: () => Error): Promise<T> {
      const go = (): Promise<T> => {
        running += 1;
        let started: Promise<T>;
        try {
          started = start();
        } catch (error) {
          next();
          return Promise.reject(error as Error);
        }
        return started.finally(next);
      };
      if (running < concurrency) return go();
      if (waiting.length >= maxWaiting) return Promise.reject(refuse());
      return new Promise<T>((resolve, reject) =>
        waiting.push(() => {
          go().then(resolve, reject);
        }),
      );
    },
    get running() {
      return running;
    },
    get waiting() {
      return waiting.length;
    },
  };
}
