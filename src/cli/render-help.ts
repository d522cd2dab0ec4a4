/**
 * Renders every help text with commander, for the build to write into dist/bundle/help.json
 * (help-text.ts, issue 20).
 */
import { Command } from 'commander';
import { COMMANDS } from './commands.js';
import type { HelpFile } from './help-text.js';
import { main } from './main.js';

/**
 * What dist/bundle/help.json holds ({@link HelpFile}): every help text ({@link renderHelpTexts}),
 * and the environment variables commander reads for any command's options (`Option.env`, e.g.
 * TTS_API for --api) with the values it accepts for each (the option's choices; `null` for an
 * option without choices, whose value only its parser can judge).
 * @throws as {@link renderHelpTexts}.
 */
export async function renderHelpFile(): Promise<HelpFile> {
  const texts = await renderHelpTexts();
  const program = new Command('tts');
  const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: {} };
  for (const entry of COMMANDS) (await entry.load())(program, io, () => undefined);
  const environment: Record<string, string[] | null> = {};
  const commands = (command: Command): Command[] => [command, ...command.commands.flatMap(commands)];
  for (const command of commands(program)) {
    for (const option of command.options) {
      if (option.envVar === undefined) continue;
      const choices = option.argChoices === undefined ? null : [...option.argChoices];
      const known = environment[option.envVar];
      // One variable for several options: only values every one of them accepts.
      environment[option.envVar] = known === undefined ? choices : known === null || choices === null ? null : known.filter((v) => choices.includes(v));
    }
  }
  return { texts, environment };
}

/**
 * Every help text as {@link main} writes it on stdout (not a terminal: HELP_WIDTH (help-text.ts)
 * columns), keyed `''` for `tts --help`, then by each command's name. The environment's `TTS_*`
 * variables are hidden from `process.env` meanwhile (and put back): commander reads an option's
 * variable (`Option.env`: TTS_API for --api) from there itself, before it writes the help, and
 * refuses the help (exit 2) for a value that is not a choice, so the build (`npm install`) failed
 * in a shell with, say, `TTS_API=http://…` set.
 * @throws Error when main does not end one with exit code 0, or writes on stderr.
 */
export async function renderHelpTexts(): Promise<Record<string, string>> {
  const hidden = Object.entries(process.env).filter(([name]) => name.startsWith('TTS_'));
  for (const [name] of hidden) delete process.env[name];
  try {
    const texts: Record<string, string> = {};
    for (const key of ['', ...COMMANDS.map((c) => c.name)]) {
      let out = '';
      let err = '';
      const sink = (add: (s: string) => void) => ({ isTTY: false, write: (s: string | Uint8Array) => (add(String(s)), true) });
      const io = {
        stdin: { isTTY: false } as unknown as NodeJS.ReadStream,
        stdout: sink((s) => (out += s)) as unknown as NodeJS.WriteStream,
        stderr: sink((s) => (err += s)) as unknown as NodeJS.WriteStream,
        env: {},
      };
      const code = await main(key === '' ? ['--help'] : [key, '--help'], io);
      if (code !== 0 || err !== '') throw new Error(`tts ${key} --help: exit ${code}, stderr ${JSON.stringify(err)}`);
      texts[key] = out;
    }
    return texts;
  } finally {
    for (const [name, value] of hidden) process.env[name] = value;
  }
}
