import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { readUserFile, readUserFileAsync, sizeText, UserFileError } from '../../src/lib/user-file.js';

// docs/robustness.md#files-a-user-names: the one reader of a file a user names. A regular file up to the limit is read
// whole; one byte more, a directory, a device or a FIFO (with no writer: a read would wait for ever) is refused at once
// with a one-line reason, by the synchronous and the asynchronous reader alike.

const dir = mkdtempSync(path.join(tmpdir(), 'user-file-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const exact = path.join(dir, 'exact.txt');
writeFileSync(exact, 'x'.repeat(100_000));
const over = path.join(dir, 'over.txt');
writeFileSync(over, 'x'.repeat(100_001));
const empty = path.join(dir, 'empty.txt');
writeFileSync(empty, '');
const folder = path.join(dir, 'folder.yaml');
mkdirSync(folder);
const fifo = path.join(dir, 'fifo');
execFileSync('mkfifo', [fifo]);

const readers = {
  sync: async (file: string, limit: number) => readUserFile(file, limit),
  async: (file: string, limit: number) => readUserFileAsync(file, limit),
};

for (const [name, read] of Object.entries(readers)) {
  t.test(`${name}: regular files up to the limit; anything else refused with its reason`, async (t) => {
    t.equal((await read(exact, 100_000)).length, 100_000, 'a file of exactly the limit');
    t.equal((await read(empty, 10)).length, 0, 'an empty file');
    const refused: Array<[string, number, string, RegExp]> = [
      [over, 100_000, 'TOO_LARGE', /^it is larger than 100000 bytes, the most this file may be$/],
      [exact, 64 * 1024, 'TOO_LARGE', /^it is larger than 64 KiB/],
      [folder, 1024, 'NOT_A_FILE', /^it is a directory, not a regular file$/],
      [fifo, 1024, 'NOT_A_FILE', /^it is a FIFO \(named pipe\), not a regular file$/],
      ['/dev/zero', 1024, 'NOT_A_FILE', /^it is a character device, not a regular file$/],
      [path.join(dir, 'missing.json'), 1024, 'ENOENT', /^ENOENT: no such file or directory$/],
    ];
    for (const [file, limit, code, message] of refused) {
      const error = await read(file, limit).then(
        () => null,
        (caught: unknown) => caught,
      );
      t.ok(error instanceof UserFileError, `${path.basename(file)} refused`);
      t.match(error, { code, file, message }, path.basename(file));
    }
  });
}

t.test('sizeText writes a limit as the docs do', async (t) => {
  t.equal(sizeText(1024 * 1024), '1 MiB');
  t.equal(sizeText(64 * 1024 * 1024), '64 MiB');
  t.equal(sizeText(512 * 1024), '512 KiB');
  t.equal(sizeText(1000), '1000 bytes');
});
