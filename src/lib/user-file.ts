import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';

// The one way a file a user names is read (docs/robustness.md#files-a-user-names): a scenario, a fixtures file, a
// body to sign, a saved journal, a snapshot. Such a file is hostile until checked: `/dev/zero` or a FIFO given by
// mistake must not grow memory without end or hang. So the path is opened without blocking (O_NONBLOCK: opening a FIFO
// does not wait for a writer), refused unless fstat() says it is a regular file (a directory, a device, a FIFO or a
// socket is not), and read to at most `limitBytes` + 1 bytes: one byte more than the limit is enough to refuse it.

/** Why a user's file was not read; `message` is one line without the path, for the caller to place. */
export class UserFileError extends Error {
  override name = 'UserFileError';
  constructor(
    readonly file: string,
    /** An errno code (ENOENT, EACCES, ...), NOT_A_FILE or TOO_LARGE. */
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

// O_NONBLOCK is POSIX: on Windows it is undefined, and a FIFO cannot be named there anyway
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
const CHUNK = 64 * 1024;

/** "1 MiB", "64 MiB", "512 KiB": how the docs write a limit. */
export function sizeText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

function openFailure(file: string, error: unknown): UserFileError {
  const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
  // Node's message names the path again ("ENOENT: no such file or directory, open 'x'"): the caller names it once
  const message = (error as Error).message.replace(/, \w+ '.*'$/s, '');
  return new UserFileError(file, code, message);
}

function notAFile(file: string, stat: Stats): UserFileError {
  const kind = kindOf(stat);
  return new UserFileError(file, 'NOT_A_FILE', kind === 'not a regular file' ? 'it is not a regular file' : `it is ${kind}, not a regular file`);
}

function tooLarge(file: string, limitBytes: number): UserFileError {
  return new UserFileError(file, 'TOO_LARGE', `it is larger than ${sizeText(limitBytes)}, the most this file may be`);
}

/** The checks on an opened file: a regular file, not larger than the limit by its own account. */
function checkOpened(file: string, stat: Stats, limitBytes: number): void {
  if (!stat.isFile()) throw notAFile(file, stat);
  if (stat.size > limitBytes) throw tooLarge(file, limitBytes);
}

/**
 * The bytes read so far, refused once past `limitBytes` (the size can change between fstat and the reads: read to
 * limit + 1 at most, whatever fstat said). `room` is how much one more read may take.
 */
function boundedBytes(file: string, limitBytes: number) {
  const chunks: Buffer[] = [];
  let length = 0;
  return {
    room: () => limitBytes + 1 - length,
    /** Keep a read's bytes; false at the end of the file. */
    add(chunk: Buffer, read: number): boolean {
      if (read === 0) return false;
      chunks.push(chunk.subarray(0, read));
      length += read;
      if (length > limitBytes) throw tooLarge(file, limitBytes);
      return true;
    },
    bytes: () => Buffer.concat(chunks, length),
  };
}

/** The bytes of the regular file `file`, at most `limitBytes` of them; throws UserFileError. Synchronous: the CLI's and start-up's reads. */
export function readUserFile(file: string, limitBytes: number): Buffer {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (error) {
    throw openFailure(file, error);
  }
  try {
    const stat = fstatSync(fd);
    checkOpened(file, stat, limitBytes);
    const kept = boundedBytes(file, limitBytes);
    let size = stat.size + 1; // the file's own size in one read, then chunks
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.max(1, Math.min(size, kept.room())));
      let read: number;
      try {
        read = readSync(fd, chunk, 0, chunk.length, null);
      } catch (error) {
        throw openFailure(file, error);
      }
      if (!kept.add(chunk, read)) return kept.bytes();
      size = CHUNK;
    }
  } finally {
    closeSync(fd);
  }
}

/** readUserFile without holding the event loop: the server's reads while it serves (a scenario's fixtures file). */
export async function readUserFileAsync(file: string, limitBytes: number): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch (error) {
    throw openFailure(file, error);
  }
  try {
    checkOpened(file, await handle.stat(), limitBytes);
    const kept = boundedBytes(file, limitBytes);
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, kept.room()));
      let read: number;
      try {
        ({ bytesRead: read } = await handle.read(chunk, 0, chunk.length, null));
      } catch (error) {
        throw openFailure(file, error);
      }
      if (!kept.add(chunk, read)) return kept.bytes();
    }
  } finally {
    await handle.close();
  }
}
