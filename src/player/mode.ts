/**
 * Whether `tts say` plays interactively, and how (docs/cli.md §12.2). Its own small module: the
 * command line decides here before it loads the player (interactive.ts).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { DisplayMode } from './display.js';

/** How the player runs: how it draws, and whether it reads keys. */
export interface InteractiveMode {
  display: DisplayMode;
  keys: boolean;
}

/** What decides {@link interactiveMode}. */
export interface InteractiveInputs {
  /** stderr is a terminal (with its width when it reports one). */
  stderr: { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  quiet: boolean;
  /**
   * Lines of their own go to the terminal beside the player's, which a redrawn line would tear:
   * `--verbose`'s, or subtitles, word timings or chapters written in place to that terminal
   * (audio/special-files.ts `sharesTerminal`). The player then prints a line per sentence.
   */
  verbose: boolean;
  /** Only the sound card is written (no -o, no stdout beside it): replaying writes nothing twice. */
  playOnly: boolean;
  /** The text is read from stdin, and stdin is the terminal: keys would take the text's keystrokes. */
  textFromTerminal: boolean;
  /**
   * Whether the run is a background job of its terminal (`tts say … &`): asked only once the
   * player would otherwise be on ({@link inBackground}).
   */
  background: () => boolean;
}

/**
 * Whether and how to play interactively (docs/cli.md §12.2): only on a terminal (stderr), only
 * when nothing but the sound card is written, never with -q (no display, no keys: -q plays as
 * before), never in a background job of the terminal. Redrawn in place unless the terminal reports no width, NO_COLOR or TERM=dumb ask for
 * plain output (no escapes at all, as for the progress line, docs/cli.md §2), or --verbose (whose
 * lines would tear it): then a line per sentence. Keys unless the text itself is typed at the
 * terminal.
 * @returns undefined when the player is off (the run behaves exactly as without it).
 */
export function interactiveMode(inputs: InteractiveInputs): InteractiveMode | undefined {
  if (inputs.stderr.isTTY !== true || inputs.quiet || !inputs.playOnly) return undefined;
  // A background job that set the terminal's mode (raw, for the keys) would be stopped by the
  // kernel (SIGTTOU) until brought to the foreground: `tts say done &` never spoke.
  if (inputs.background()) return undefined;
  const columns = inputs.stderr.columns;
  const noColor = inputs.env['NO_COLOR'] !== undefined && inputs.env['NO_COLOR'] !== '';
  const plain = columns === undefined || !(columns > 0) || noColor || inputs.env['TERM'] === 'dumb' || inputs.verbose;
  return { display: plain ? 'lines' : 'redraw', keys: !inputs.textFromTerminal };
}


/**
 * Whether this process is in a background process group of its controlling terminal (`cmd &` in
 * an interactive shell): its process group is not the terminal's foreground one. Read from
 * /proc/self/stat (Linux: pgrp and tpgid, the 5th and 8th fields), else from `ps` (macOS, BSD).
 * False when there is no controlling terminal, or when neither can say.
 */
export function inBackground(): boolean {
  let pgrp: number;
  let tpgid: number;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // After the command's name in parentheses (which may hold spaces and parentheses itself).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    pgrp = Number(fields[2]);
    tpgid = Number(fields[5]);
  } catch {
    try {
      [tpgid, pgrp] = execFileSync('ps', ['-o', 'tpgid=,pgid=', '-p', String(process.pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .trim()
        .split(/\s+/)
        .map(Number) as [number, number];
    } catch {
      return false;
    }
  }
  return Number.isInteger(pgrp) && Number.isInteger(tpgid) && tpgid > 0 && tpgid !== pgrp;
}
