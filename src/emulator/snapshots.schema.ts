import { z } from 'zod';
import { instant } from '../http/formats.js';
import { SNAPSHOT_NAME } from './snapshots.service.js';

// docs/control-plane.md#snapshots
const NAME_RULE = 'A snapshot name: 1-64 characters, letters, digits, ".", "_" or "-", starting with a letter or digit';

export const snapshotName = z.string({ error: NAME_RULE }).regex(SNAPSHOT_NAME, NAME_RULE).describe(NAME_RULE);

export const saveSnapshotBody = z.strictObject({ name: snapshotName });

export const snapshotParams = z.strictObject({ name: snapshotName });

export const snapshotSummarySchema = z
  .object({
    name: z.string(),
    clock: instant().describe('Emulated instant of the state; the clock reads it again after a restore'),
    clockMode: z.enum(['frozen', 'realtime']).describe('Whether the clock was frozen or flowing; a restore brings the mode back too'),
    schemaVersion: z.number().int().describe('Database schema version; a file of another version is refused on upload'),
    savedAt: instant().describe('Real time the snapshot was saved or uploaded'),
    tables: z.number().int(),
    rows: z.number().int(),
  })
  .meta({ id: 'Snapshot' });

export const snapshotListSchema = z.object({ data: z.array(snapshotSummarySchema) });

export const restoreSnapshotResponse = z.object({
  status: z.literal('restored'),
  snapshot: snapshotSummarySchema,
  durationMs: z.number().describe('Time the restore took inside the server'),
});
