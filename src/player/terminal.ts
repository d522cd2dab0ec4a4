/**
 * The player's keyboard (docs/cli.md §12.2): the controlling terminal, `/dev/tty`, opened
 * beside stdin — so keys work while the text itself comes from a pipe — and put in raw mode
 * (no echo, no line buffering, Ctrl-C as a byte). The terminal's mode is always given back:
 * when the player closes it, and on every way out of the process — `q`, Ctrl-C, an error, an
 * uncaught exception or a stop signal — through `signal-exit` (the package temp-files.ts uses)
 * and its hook on the process's 'exit'. Only SIGKILL leaves it raw (`stty sane` mends that).
 */
import { openSync, closeSync } from 'node:fs';
import { ReadStream } from 'node:tty';
import { onExit } from 'signal-exit';
import { KeyDecoder, type PlayerAction } from './keys.js';

/** The keyboard while it is open. */
export interface KeyInput {
  /** Gives the terminal its mode back and stops reading. Idempotent. */
  close(): void;
}

/**
 * Opens `path` (default `/dev/tty`) in raw mode and calls `onAction` for each key.
 * @returns undefined when there is no controlling terminal to read (a daemon, a CI job) or it
 *   cannot be put in raw mode: then the player plays without keys.
 */
export function openKeys(onAction: (action: PlayerAction) => void, path = '/dev/tty'): KeyInput | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  let input: ReadStream;
  try {
    input = new ReadStream(fd);
    if (!input.isTTY) throw new Error('not a terminal');
    input.setRawMode(true);
  } catch {
    closeSync(fd);
    return undefined;
  }
  let open = true;
  const restore = (): void => {
    if (!open) return;
    open = false;
    try {
      input.setRawMode(false); // tcsetattr with the mode libuv saved when raw mode began
    } catch {
      // The terminal went away (hung up): nothing to give back.
    }
  };
  const removeHook = onExit(() => restore(), { alwaysLast: true });
  const decoder = new KeyDecoder();
  input.on('data', (data: Buffer) => {
    for (const action of decoder.push(data)) onAction(action);
  });
  input.on('error', () => {}); // a hung-up terminal ends the keys, not the run
  return {
    close: () => {
      restore();
      removeHook();
      input.destroy();
    },
  };
}
