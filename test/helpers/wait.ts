import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Poll `condition` until it holds, with a generous bound (a loaded 2-core CI machine may be slow, never wrong): for
 * what a test cannot await as an event. Throws naming `what` when the bound passes.
 */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}
