/**
 * Text from outside (the service, file names, the key's neighbours) made safe for a terminal and
 * for one JSON line on stderr: control and bidirectional characters written as escapes.
 */


/**
 * Control characters, which a terminal would obey rather than show: C0 (but tab) and DEL, C1
 * (U+0080–U+009F; U+009B is a one-byte CSI), line and paragraph separators, and the bidirectional
 * overrides and isolates that can make text read in another order (CVE-2021-42574).
 */
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Makes text safe to print on a terminal: every control character becomes visible as `\xHH` or
 * `\uHHHH`, so text that came from a service (an error message, a code, an item id) can never
 * move the cursor, set the title, clear the screen or fake a line of output.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** The most characters (code points) of input an error message quotes ({@link quoteInput}). */
export const QUOTED_CHARS = 60;

/**
 * Input as an error message quotes it (an SSML element's or attribute's name, a value, a
 * speaker's name): its first `max` characters — code points, so no surrogate pair is cut —, then
 * `…` when there was more, with control and bidirectional characters escaped as
 * {@link escapeControls} does; so a 1 MB name costs a message of a line, not a megabyte on the
 * terminal, and cannot drive it.
 * @param text the input, any length (only its start is looked at).
 * @param max the most code points kept, {@link QUOTED_CHARS} unless given.
 */
export function quoteInput(text: string, max: number = QUOTED_CHARS): string {
  return escapeControls(shortenedInput(text, max));
}

/**
 * The start of `text` that {@link quoteInput} shows, not yet escaped: its first `max` code points,
 * then `…` when there was more (for a caller that quotes it in its own way first, e.g. as JSON).
 */
export function shortenedInput(text: string, max: number = QUOTED_CHARS): string {
  let end = 0;
  for (let n = 0; n < max && end < text.length; n++) end += (text.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
  return end < text.length ? `${text.slice(0, end)}…` : text;
}

/**
 * A list of inputs as an error message gives it: the first `max` of them, each through
 * {@link quoteInput} and `format`, joined with `, `, then ` and N more` when there were more.
 * @param items the inputs, in the order to name them.
 * @param format how one quoted input is written (`"NAME"`), default as it is.
 */
export function quoteList(items: readonly string[], format: (quoted: string) => string = (q) => q, max = 10): string {
  const shown = items.slice(0, max).map((item) => format(quoteInput(item))).join(', ');
  return items.length > max ? `${shown} and ${(items.length - max).toLocaleString('en')} more` : shown;
}

/**
 * Text asked for on stdout by name (`--print-text`, `tts lexicon check`), as it may be shown: on a
 * terminal, each line with its control characters escaped as {@link escapeControls} does (the
 * text of a downloaded book must not set the title, clear the screen or write the clipboard), line
 * breaks kept; into a pipe or a file, exactly as given (the text as it will be sent).
 */
export function stdoutText(text: string, stdout: { isTTY?: boolean | undefined }): string {
  if (stdout.isTTY !== true) return text;
  return text.replace(/[^\n]+/gu, (line) => (line.endsWith('\r') ? `${escapeControls(line.slice(0, -1))}\r` : escapeControls(line)));
}

/**
 * JSON for one line on stderr: JSON.stringify already escapes C0 controls, but leaves C1 and
 * the bidirectional controls as they are; those are written as `\uHHHH` escapes too.
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * One word of a command line a hint suggests (`tts voices --base-url URL`), as a POSIX shell reads
 * it back: as is when it holds only characters no shell treats specially, else in single quotes
 * (a `'` inside written `'\''`, POSIX.1-2017 XCU §2.2.2).
 */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/u.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}
