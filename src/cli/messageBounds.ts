/** The longest word (run of non-space characters) a message prints whole: longer ones are values echoed from input. */
const MAX_WORD_CHARS = 160;
/** The longest line a message prints whole. */
const MAX_LINE_CHARS = 1000;
/** The most lines a message prints. */
const MAX_LINES = 60;

function shortWord(word: string): string {
  return word.length <= MAX_WORD_CHARS ? word : `${word.slice(0, 60)}…[${word.length - 60} more characters]`;
}

function shortLine(line: string): string {
  const short = line.replace(/\S+/g, shortWord);
  return short.length <= MAX_LINE_CHARS
    ? short
    : `${short.slice(0, MAX_LINE_CHARS)}…[${short.length - MAX_LINE_CHARS} more characters]`;
}

/**
 * A message to print, bounded in size whatever input it echoes (a one-line 10 MB file given as a scenario, a long
 * `--set` value): long words and lines are cut with a note of how much was left out, and at most {@link MAX_LINES}
 * lines are kept.
 */
export function boundedMessage(message: string): string {
  const lines = message.split('\n');
  const kept = lines.slice(0, MAX_LINES).map(shortLine);
  if (lines.length > MAX_LINES) kept.push(`…[${lines.length - MAX_LINES} more lines]`);
  return kept.join('\n');
}
