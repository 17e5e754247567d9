import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/**
 * The most bytes any input file may hold: scenarios, imported configs, Hugging Face configs, measured tables,
 * profiles and `merge` parts are kilobytes to a few megabytes, so a larger file is a mistake (a log, a checkpoint,
 * /dev/zero) that would otherwise be read into memory whole.
 */
export const MAX_INPUT_FILE_BYTES = 64 * 1024 * 1024;

/** A file that was opened but is not one to read: not a regular file, or too large. `reason` is in a user's words. */
export class InputFileError extends Error {
  readonly code = 'CLUSTERSIM_INPUT_FILE';
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** What a non-regular file is, for a message. */
function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a pipe (FIFO)';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Reads a whole input file as UTF-8 text, refusing what is not a regular file (a FIFO is opened without blocking and
 * refused) and a file larger than `maxBytes`. At most `maxBytes` + 1 bytes are ever read, so a file that grows while
 * it is read is refused too. Errors are the system's (ENOENT, EACCES) or an {@link InputFileError}.
 */
export function readInputText(path: string, maxBytes = MAX_INPUT_FILE_BYTES): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new InputFileError('it is a folder, not a file');
    if (!st.isFile())
      throw new InputFileError(`it is ${fileKind(st)}, not a regular file; save what it holds to a file and give that`);
    if (st.size > maxBytes) throw tooLarge(st.size, maxBytes);
    const buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, st.size + 65536));
    let length = 0;
    for (;;) {
      if (length === buffer.length) break;
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > maxBytes) throw tooLarge(length, maxBytes);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

function tooLarge(bytes: number, maxBytes: number): InputFileError {
  const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(b < 10 * 1024 * 1024 ? 1 : 0)} MiB`;
  return new InputFileError(
    `it holds ${bytes > maxBytes + 1 ? mib(bytes) : `more than ${mib(maxBytes)}`}, ` +
      `and an input file may hold at most ${mib(maxBytes)}; is it the file you meant?`,
  );
}
