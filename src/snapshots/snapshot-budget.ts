import type { Snapshot } from './snapshot.js';

// The process's budget for saved snapshots (docs/control-plane.md#snapshots): the rows every sandbox saved (the root's
// and every session's, uploads included) and the database images sessions from a snapshot open
// (docs/sessions.md#how-fast). Sandbox machinery, so the sessions registry, which takes the images, counts them without
// entering the control plane (docs/architecture.md#layers).

/** The default of the process-wide budget (snapshotBytes of the saved rows, and the images' bytes). */
export const SNAPSHOT_BUDGET_BYTES = 1024 * 1024 * 1024;

/**
 * The bytes the saved snapshots of this process hold, against `limitBytes`. One per process, like the snapshot check's
 * queue (docs/robustness.md#off-thread-work): the heap it protects is the process's. A sandbox gives its snapshots back
 * when it closes (the emulator's snapshotsBudgetService).
 */
export const snapshotBudget = { heldBytes: 0, limitBytes: SNAPSHOT_BUDGET_BYTES, imageBytes: 0 };

/** The saved rows' share of `heldBytes` (the rest is session images, a cache). */
export function rowBytesHeld(): number {
  return snapshotBudget.heldBytes - snapshotBudget.imageBytes;
}

/** Whether an image of at most `bytes` would fit now (checked before one is made: making it costs a copy). */
export function roomForImage(bytes: number): boolean {
  return snapshotBudget.heldBytes + bytes <= snapshotBudget.limitBytes;
}

/** The snapshots holding an image now, oldest image first: a cache, given up before a save or upload is refused. */
const withImages = new Set<Snapshot>();

/**
 * Keep `image` as the database later sessions from `snapshot` open, if the budget has room for it; otherwise those
 * sessions restore the snapshot row by row, as the first did (slower, never more memory). Its bytes are given back
 * with the snapshot (`dropSessionImage`).
 */
export function keepSessionImage(snapshot: Snapshot, image: Buffer): boolean {
  if (snapshot.sessionImage || snapshot.released || !roomForImage(image.length)) return false;
  snapshot.sessionImage = image;
  snapshotBudget.heldBytes += image.length;
  snapshotBudget.imageBytes += image.length;
  withImages.add(snapshot);
  return true;
}

/**
 * Make room for `bytes` of saved rows by giving up session images, oldest first: an image only spares later sessions
 * a row-by-row restore, so it never makes a save or an upload a 409 (docs/control-plane.md#snapshots). The caller
 * first checks that the rows fit once every image is given up (`rowBytesHeld`), so a refused save gives up none.
 */
export function makeRoomForRows(bytes: number): void {
  for (const snapshot of withImages) {
    if (snapshotBudget.heldBytes + bytes <= snapshotBudget.limitBytes) return;
    dropSessionImage(snapshot);
  }
}

/** A snapshot's image goes, and its bytes back to the budget (the snapshot stays: releaseSnapshot when it goes too). */
export function dropSessionImage(snapshot: Snapshot): void {
  if (!snapshot.sessionImage) return;
  snapshotBudget.heldBytes -= snapshot.sessionImage.length;
  snapshotBudget.imageBytes -= snapshot.sessionImage.length;
  snapshot.sessionImage = undefined;
  withImages.delete(snapshot);
}

/**
 * A snapshot deleted, replaced or closed with its sandbox: its image goes, and none is kept for it later (the first
 * session from a big snapshot takes turns to start, and its snapshot may go meanwhile: docs/control-plane.md#big-states).
 */
export function releaseSnapshot(snapshot: Snapshot): void {
  snapshot.released = true;
  dropSessionImage(snapshot);
}
