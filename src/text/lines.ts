/**
 * `--lines` (docs/cli.md §1): stdin read line by line, each non-empty line handed on as soon as
 * its line break arrives (`tail -f log | tts say --lines`).
 */
import { createInterface } from 'node:readline';
import { decodeUtf8 } from './input.js';

/**
 * Yields each line of `stdin` that has something to say, as it arrives; ends at end of input.
 * Bytes are decoded as strict UTF-8 per line. Aborting `signal` closes stdin and ends the lines.
 * @throws TtsError `usage` (exit 2) on a line that is not valid UTF-8.
 */
export async function* stdinLines(stdin: NodeJS.ReadableStream, signal?: AbortSignal): AsyncGenerator<string, void, undefined> {
  // latin1 keeps every byte as one char, so each line can be re-checked as strict UTF-8.
  stdin.setEncoding('latin1');
  const rl = createInterface({ input: stdin, crlfDelay: Infinity, terminal: false });
  // An aborted run (Ctrl-C, a fatal error) stops reading at once, so `tail -f log | tts say
  // --lines` exits instead of waiting for a line that may never come.
  const stop = (): void => {
    rl.close();
    (stdin as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
  };
  if (signal?.aborted) stop();
  signal?.addEventListener('abort', stop, { once: true });
  let n = 0;
  for await (const raw of rl) {
    n++;
    const line = decodeUtf8(Buffer.from(raw, 'latin1'), `line ${n} of standard input`);
    if (line.trim() !== '') yield line;
  }
}
