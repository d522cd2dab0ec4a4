/**
 * `tts lexicon check [text...]` (docs/cli.md §11.3): the text as it will be sent to the service,
 * after the pronunciation lexicon — on stdout, since it is text asked for by name (like
 * `--print-text`). The lexicon is the run's: `--lexicon FILE`, `lexicon` in the config file or the
 * profile, else `lexicon.toml` beside the config file. A bad lexicon is exit 2 naming its line.
 */
import type { Command } from 'commander';
import { EXIT, TtsError } from '../errors.js';
import type { Language } from '../protocol/types.js';
import { languageForVoice, DEFAULT_VOICE } from '../protocol/voices.js';
import { lexiconFor } from '../text/lexicon.js';
import { openText } from '../text/read.js';
import { applyConfig } from './config.js';
import { configPath } from './config-file.js';
import { configRelativePaths } from './config-defaults.js';
import { DEFAULT_MAX_INPUT_BYTES, bytesIn, type CommandDone } from './flags.js';
import { createReporter, reportError, type CommandIo } from './report.js';
import { stdoutText } from './escape.js';

/** Flags of `tts lexicon check`. */
interface CheckFlags {
  file?: string;
  lexicon?: string | boolean;
  voice: string;
  language?: Language;
  profile?: string;
  maxInput: number;
}

/** What the config file (or its profile) may set for `tts lexicon check`: the lexicon and the language it picks. */
const CHECK_CONFIG_KEYS: ReadonlySet<string> = new Set(['lexicon', 'no-lexicon', 'voice', 'language']);

/** Adds `lexicon check` to the program. */
export function addLexiconCommand(program: Command, io: CommandIo, done: CommandDone): void {
  const lexicon = program.command('lexicon').description('check the pronunciation lexicon (docs/cli.md §11.3)');
  const check = lexicon
    .command('check')
    .description('print the text as it will be sent, after the lexicon')
    .argument('[text...]', 'the text (default: stdin)')
    .option('-f, --file <path>', 'read the text from a file (- = stdin)')
    .option('--lexicon <file>', 'the lexicon (default: lexicon.toml beside the config file)')
    .option('--no-lexicon', 'use no lexicon')
    .option('-v, --voice <id>', 'the voice, whose language picks the entries', DEFAULT_VOICE)
    .option('-l, --language <ja|en>', 'the language whose entries apply (default: from the voice prefix)')
    .option('--profile <name>', 'use [profile.NAME] of the config file (env TTS_PROFILE)')
    .option('--max-input <size>', 'refuse a text larger than this (bytes, or e.g. 64MiB)', bytesIn(1, 2 ** 40, '--max-input'), DEFAULT_MAX_INPUT_BYTES)
    .action(async (words: string[], flags: CheckFlags, cmd: Command) => done(await checkText(words, configRelativePaths(flags, cmd, io.env), io)));
  check.hook('preAction', async () => applyConfig(program, check, io.env, CHECK_CONFIG_KEYS));
}

/**
 * Prints `words` (or the `-f` file, or stdin) after the lexicon, as is otherwise.
 * @returns 0; 2 for a bad lexicon, language or text (reported on stderr).
 */
async function checkText(words: string[], flags: CheckFlags, io: CommandIo): Promise<number> {
  const reporter = createReporter(io.stderr, {});
  try {
    const language = flags.language ?? (languageForVoice(flags.voice) as Language);
    if (language !== 'en' && language !== 'ja') throw new TtsError('usage', `--language must be ja or en, got "${String(language)}"`);
    const rewrite = await lexiconFor(flags.lexicon, configPath(io.env));
    if (rewrite === undefined) reporter.warn(flags.lexicon === false ? 'no lexicon (--no-lexicon)' : 'no lexicon: the text is sent as written');
    const parts: string[] = [];
    const signal = new AbortController().signal;
    for await (const block of await openText({ words, file: flags.file, stdin: io.stdin, maxInputBytes: flags.maxInput, signal })) parts.push(block);
    const text = parts.join('');
    io.stdout.write(stdoutText(rewrite === undefined ? text : rewrite(text, language).text, io.stdout));
    if (!text.endsWith('\n')) io.stdout.write('\n');
    return EXIT.ok;
  } catch (error) {
    return reportError(error, reporter);
  }
}
