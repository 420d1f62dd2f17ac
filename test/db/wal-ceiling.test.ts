import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { buildTestApp } from '../helper.js';
import { WAL_BACKSTOP_BYTES, WAL_CEILING_BYTES } from '../../src/db/checkpointer.js';

// docs/decisions.md#wal-ceiling: with a database file the WAL stays under WAL_CEILING_BYTES (64 MiB) however long the
// writes go on. The loop is bounded by bytes, not time: it writes until two ceilings' worth of WAL frames (128 MiB)
// have gone through the WAL, full speed (eight requests in flight), and the WAL file is measured after every round.

/**
 * Frames in the WAL now: `mxFrame` of the WAL index header, the first bytes of the `-shm` file (SQLite's WAL-index
 * format: u32 version, u32 unused, u32 change counter, u8 isInit, u8 bigEndCksum, u16 page size, u32 mxFrame), in the
 * machine's byte order. It drops when SQLite starts the WAL over.
 */
function framesInWal(shm: string): number {
  const fd = openSync(shm, 'r');
  try {
    const header = Buffer.alloc(20);
    readSync(fd, header, 0, 20, 0);
    return header.readUInt32LE(16);
  } finally {
    closeSync(fd);
  }
}

t.test(`under sustained full-speed writes the WAL stays under ${WAL_CEILING_BYTES / 2 ** 20} MiB`, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wal-ceiling-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'sandbox.db');
  const sandbox = await buildTestApp({ db: file });
  t.teardown(sandbox.close);
  const pageSize = sandbox.ctx.db.pragma('page_size', { simple: true }) as number;
  const frameBytes = pageSize + 24;

  const target = 2 * WAL_CEILING_BYTES;
  let throughWal = 0;
  let lastFrames = 0;
  let peakWal = 0;
  let restarts = 0;
  let requests = 0;
  for (let round = 0; throughWal < target; round += 1) {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: `WAL ${round}-${i} ${'x'.repeat(100)}` }),
      ),
    );
    requests += answers.length;
    const refused = answers.find((answer) => answer.statusCode !== 202);
    if (refused) {
      t.fail(`a deposit answered ${refused.statusCode}: ${refused.body}`);
      return;
    }
    const frames = framesInWal(`${file}-shm`);
    if (frames < lastFrames) {
      restarts += 1;
      throughWal += frames * frameBytes; // started over since: at least these
    } else throughWal += (frames - lastFrames) * frameBytes;
    lastFrames = frames;
    peakWal = Math.max(peakWal, statSync(`${file}-wal`).size);
  }
  t.comment(`${requests} deposits, ${(throughWal / 2 ** 20).toFixed(0)} MiB through the WAL, ${restarts} restarts, peak WAL file ${(peakWal / 2 ** 20).toFixed(1)} MiB`);
  t.ok(peakWal <= WAL_CEILING_BYTES, `the WAL file peaked at ${(peakWal / 2 ** 20).toFixed(1)} MiB, under the ceiling`);
  t.ok(restarts >= 3, `SQLite started the WAL over while the writes went on (${restarts} times)`);
  t.ok(statSync(`${file}-wal`).size <= WAL_BACKSTOP_BYTES + 2 * 2 ** 20, 'journal_size_limit trims the file back near the backstop after a restart');

  const rows = (sandbox.ctx.db.prepare('SELECT COUNT(*) AS n FROM transactions').get() as { n: number }).n;
  await sandbox.close();
  t.notOk(existsSync(`${file}-wal`), 'close leaves no WAL');
  const { default: Database } = await import('better-sqlite3');
  const reopened = new Database(file, { readonly: true });
  t.equal((reopened.prepare('SELECT COUNT(*) AS n FROM transactions').get() as { n: number }).n, rows, 'every row is in the file');
  t.equal(reopened.pragma('integrity_check', { simple: true }), 'ok');
  reopened.close();
});
