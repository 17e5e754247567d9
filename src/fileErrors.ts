/** Why a file could not be read, in words a user acts on (for the messages of every command that reads files). */
export function fileErrorReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  if (code === 'EACCES') return 'permission denied';
  return code ?? String(err);
}
