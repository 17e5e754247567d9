import {
  chmodSync,
  closeSync,
  fsyncSync,
  openSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Where a write to `path` lands: the file a link points to (so that the link stays a link), or `path` itself when
 * nothing is there yet.
 */
function landingPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function isRegularOrAbsent(path: string): { regular: boolean; mode?: number } {
  try {
    const st = statSync(path);
    return { regular: st.isFile(), mode: st.mode & 0o7777 };
  } catch {
    return { regular: true };
  }
}

/**
 * Writes `text` to `path` so that the file is either the old one or the whole new one, never a part: the text goes
 * to a temporary file in the same folder, which is flushed and then renamed over `path`. A kill, a crash or a full
 * disk leaves the previous file as it was (and at worst a `.name.*.tmp` beside it, removed when the error is seen).
 * A path that is a device or a pipe (`/dev/stdout`, a FIFO) is written directly: it cannot be replaced. The
 * system's error is thrown as it is; callers put it in words.
 */
export function writeFileAtomic(path: string, text: string | Uint8Array): void {
  const target = landingPath(path);
  const { regular, mode } = isRegularOrAbsent(target);
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  if (!regular) {
    writeAll(openSync(target, 'w'), bytes);
    return;
  }
  const temp = join(
    dirname(target),
    `.${basename(target)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`,
  );
  let renamed = false;
  try {
    writeAll(openSync(temp, 'wx', mode ?? 0o666), bytes, true);
    if (mode !== undefined) chmodSync(temp, mode);
    renameSync(temp, target);
    renamed = true;
  } finally {
    if (!renamed) removeQuietly(temp);
  }
}

/** Writes every byte to `fd` (flushed to disk first when `sync`) and closes it, even when a write fails. */
function writeAll(fd: number, bytes: Uint8Array, sync = false): void {
  try {
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Never made, or already gone.
  }
}
