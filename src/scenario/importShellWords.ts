import { ScenarioError } from '../sim/errors.js';

/**
 * Splitting a command line pasted from a shell script into words, the way a POSIX shell does for
 * the parts that matter here: blanks and newlines separate words; backslash-newline continues a
 * line; `'…'` is literal; `"…"` keeps blanks and honours `\"`, `\\`, `\$`; a `#` that starts a word
 * comments out the rest of its line. Shell variables are not expanded (there is no environment to
 * expand them from): a word that holds one keeps the `$` text, and the caller warns about it.
 */

/** The words, and what stopped the reading early (a pipe, `;`, `&`, a redirection), if anything. */
export interface ShellWords {
  words: string[];
  /** The character at which reading stopped (the rest is another command or a redirection). */
  stoppedAt?: string;
}

const BLANK = new Set([' ', '\t', '\n', '\r', '\f', '\v']);
const COMMAND_END = new Set(['|', ';', '&', '>', '<']);

/**
 * Splits `text` into shell words.
 * @param what names the input in error messages (`--megatron-args`)
 * @throws ScenarioError on an unterminated quote
 */
export function shellWords(text: string, what: string): ShellWords {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  const end = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') {
      const next = text[i + 1];
      if (next === '\n') i += 2;
      else if (next === '\r' && text[i + 2] === '\n') i += 3;
      else if (next === undefined) i += 1;
      else {
        word += next;
        inWord = true;
        i += 2;
      }
    } else if (BLANK.has(c)) {
      end();
      i += 1;
    } else if (c === '#' && !inWord) {
      while (i < text.length && text[i] !== '\n') i += 1;
    } else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) throw new ScenarioError('', `${what}: unterminated ' quote starting at '${excerpt(text, i)}'`);
      word += text.slice(i + 1, close);
      inWord = true;
      i = close + 1;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && j + 1 < text.length) {
          const next = text[j + 1];
          if (next === '\n') j += 1;
          else if (next === '"' || next === '\\' || next === '$' || next === '`') {
            word += next;
            j += 1;
          } else word += '\\';
        } else word += text[j];
      }
      if (j >= text.length)
        throw new ScenarioError('', `${what}: unterminated " quote starting at '${excerpt(text, i)}'`);
      inWord = true;
      i = j + 1;
    } else if (COMMAND_END.has(c)) {
      // `2>&1`: a redirection's file-descriptor number belongs to it, not to the arguments.
      if (c === '>' || c === '<') {
        if (/^\d+$/.test(word)) {
          word = '';
          inWord = false;
        }
      }
      end();
      return { words, stoppedAt: c };
    } else {
      word += c;
      inWord = true;
      i += 1;
    }
  }
  end();
  return { words };
}

function excerpt(text: string, at: number): string {
  const s = text.slice(at, at + 30).replace(/\s+/g, ' ');
  return at + 30 < text.length ? `${s}…` : s;
}
