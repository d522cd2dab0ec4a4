/**
 * The help texts, written ahead (issue 20). `tts --help` used to load the bundle, the ES module
 * loader and commander to print a text that only changes with tts itself: 1.96 times `node -e 0`
 * (1.18 times now). The build (scripts/bundle.js) renders every help text once with commander
 * (render-help.ts), into dist/bundle/help.json ({@link HELP_FILE}); bin/tts.js prints the one asked
 * for from there, and loads nothing else, when the arguments are exactly one of the help forms
 * (`--help`, `-h`, `help`; `NAME --help`, `NAME -h`, `help NAME` for a command NAME) and the help
 * would be as wide as it is in the file ({@link helpWidth}). Any other run asks commander, which
 * writes the same text (test/cli/help-text.test.ts).
 */

/**
 * Columns the help is wrapped to at most (commander wraps to the terminal's width, and to 80 when
 * the output is not a terminal): lines longer than this are hard to read, and a fixed width
 * makes the help the same text on every terminal at least this wide.
 */
export const HELP_WIDTH = 80;

/** The file, in the bundle's folder, that the build writes the {@link HelpFile} to. */
export const HELP_FILE = 'help.json';

/**
 * dist/bundle/help.json (render-help.ts writes it, bin/tts.js reads it).
 * - `texts`: each help text, keyed `''` for `tts --help` and by each command's name.
 * - `environment`: the variables commander reads for options (TTS_API for --api), each with the
 *   values it accepts, `null` for values only commander can judge. Commander refuses even the help
 *   (exit 2) when one holds a value it does not accept, so bin/tts.js answers from the file only
 *   when each of them is unset or accepted.
 */
export interface HelpFile {
  texts: Record<string, string>;
  environment: Record<string, string[] | null>;
}

/**
 * The width commander wraps help written to `stream` to: the terminal's columns when it is a
 * terminal narrower than {@link HELP_WIDTH}, else {@link HELP_WIDTH}.
 */
export function helpWidth(stream: { isTTY?: boolean; columns?: number }): number {
  const columns = stream.isTTY === true ? stream.columns : undefined;
  return columns !== undefined && columns > 0 && columns < HELP_WIDTH ? columns : HELP_WIDTH;
}
