/**
 * How settings from the config file (docs/cli.md §7) meet a run's own flags: container choosers
 * and bit rate that fit the output, input settings that fit the input, and `--cache` given as a flag beating `no-cache` in the file
 * or TTS_NO_CACHE (docs/cli.md §8). Shared by the synthesis commands and every line of `tts batch`.
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Command } from 'commander';
import { containerOfPath } from '../audio/containers/registry.js';
import { inputFormatOf } from '../text/documents/formats.js';
import type { SynthesisFlags } from './flags.js';
import { configPath } from './config-file.js';
import { defaultLexiconPath } from '../text/lexicon.js';

/**
 * Keeps settings that came from the config file (docs/cli.md §7) from refusing a run they were
 * not written for, or from overriding what the run says itself: the configured container
 * choosers (`container`, `wav`, `raw`) are a default for stdout and for names without a known
 * extension — an `-o` extension or any of `--container`/`--wav`/`--raw` given as a flag wins over
 * all three, and playback alone ignores them —; a configured `bitrate` applies only to the MP3
 * and Opus outputs; a configured `words` only to runs that write subtitles; a configured
 * `input-format`, `chapter-level` and `code-phrase` only to inputs they fit
 * ({@link fitConfigInputDefaults}). Given as flags, they keep their strict meaning (an override,
 * exit 2 where they cannot apply). Also marks `--cache` given as a flag ({@link SynthesisFlags.cacheForced}).
 * @param words the text given on the command line (none: the input is `-f` or stdin).
 * @returns `flags`, adjusted in place.
 */
export function softenConfigDefaults<F extends SynthesisFlags>(flags: F, cmd: Command, words: readonly string[] = []): F {
  const toStdout = flags.output === '-' || (flags.output === undefined && cmd.name() !== 'say');
  const fromConfig = (attr: string): boolean => cmd.getOptionValueSource(attr) === 'config';
  fitConfigDefaults(flags, fromConfig, flags.output === '-' ? undefined : flags.output, toStdout);
  fitConfigInputDefaults(flags, fromConfig, words);
  markCacheForced(flags, cmd);
  return flags;
}

/** The attributes that choose the container of a file or stdout. */
const CONTAINER_CHOOSERS = ['container', 'wav', 'raw'] as const;

/**
 * The rule of {@link softenConfigDefaults} for one output, shared by the synthesis commands and
 * every job of `tts batch` (docs/cli.md §7, §9).
 * @param fromConfig whether an attribute's value came from the config file (for a batch job: and
 *   was not set by the job's own line, which counts as a flag).
 * @param output the file written (`-o` or a job's `output`), undefined for none or stdout.
 * @param toStdout whether the audio goes to stdout.
 * @returns `flags`, adjusted in place.
 */
export function fitConfigDefaults<F extends SynthesisFlags>(flags: F, fromConfig: (attr: string) => boolean, output: string | undefined, toStdout: boolean): F {
  const chosen = (attr: (typeof CONTAINER_CHOOSERS)[number]): boolean => (attr === 'container' ? flags.container !== undefined : flags[attr] === true);
  const byFlag = CONTAINER_CHOOSERS.some((attr) => chosen(attr) && !fromConfig(attr));
  const named = output !== undefined && containerOfPath(output) !== undefined;
  const playOnly = output === undefined && !toStdout;
  if (byFlag || named || playOnly) {
    for (const attr of CONTAINER_CHOOSERS) if (fromConfig(attr)) delete flags[attr];
  }
  if (fromConfig('bitrate')) {
    const container = flags.container ?? (flags.wav === true ? 'wav' : flags.raw === true ? 'raw' : output === undefined ? undefined : containerOfPath(output));
    if (container !== 'mp3' && container !== 'opus') delete flags.bitrate;
  }
  // `words` times the words of the subtitles: a configured one applies to the runs that write
  // subtitles, not a demand that every run write them (it made every other run exit 2).
  if (fromConfig('words') && flags.subtitles === undefined) delete flags.words;
  return flags;
}

/**
 * The input settings of the config file (docs/cli.md §7, §10) where they fit the run's input:
 * `input-format` is the format of an input whose name picks none — a `-f` name that does
 * (`.md`, `.html`, `.epub`, `.ssml`, `.script.txt`, …: text/documents/formats.ts) wins over it,
 * as an `-o` extension wins over a configured container —, `epub` only of a `-f` file (an EPUB is
 * never words nor stdin), and never with `--lines` (plain text, line by line);
 * `chapter-level` and `code-phrase` apply only when the input is then a document (Markdown,
 * HTML, EPUB). Given as flags they keep their errors (exit 2: `--chapter-level needs a document`).
 * @param fromConfig whether an attribute's value came from the config file.
 * @param words the text given on the command line (none: the input is `-f` or stdin).
 * @returns `flags`, adjusted in place.
 */
export function fitConfigInputDefaults<F extends SynthesisFlags>(flags: F, fromConfig: (attr: string) => boolean, words: readonly string[]): F {
  const file = words.length > 0 ? undefined : flags.file;
  if (fromConfig('inputFormat') && flags.inputFormat !== undefined) {
    const named = inputFormatOf(undefined, file) !== 'text';
    const notAFile = flags.inputFormat === 'epub' && (file === undefined || file === '-');
    if (named || notAFile || flags.lines === true) delete flags.inputFormat;
  }
  const format = inputFormatOf(flags.inputFormat, file);
  if (format !== 'markdown' && format !== 'html' && format !== 'epub') {
    if (fromConfig('chapterLevel')) delete flags.chapterLevel;
    if (fromConfig('codePhrase')) delete flags.codePhrase;
  }
  return flags;
}

/** Marks `--cache` given as a flag on `cmd` ({@link SynthesisFlags.cacheForced}): it beats `no-cache` in the file and TTS_NO_CACHE. */
export function markCacheForced(flags: SynthesisFlags, cmd: Command): void {
  if (cmd.getOptionValueSource('cache') === 'cli' && flags.cache === true) flags.cacheForced = true;
}

/** The environment the piece cache is chosen from: without TTS_NO_CACHE when `--cache` was given (docs/cli.md §8). */
export function cacheEnv(flags: SynthesisFlags, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return flags.cacheForced === true ? { ...env, TTS_NO_CACHE: undefined } : env;
}

/**
 * A `lexicon = "FILE"` read from the config file names a file beside it when relative (docs/cli.md
 * §7, §11.3); given as a flag it is relative to the current folder as any path.
 * @returns `flags`, adjusted in place.
 */
export function configRelativePaths<F extends { lexicon?: string | boolean | undefined }>(flags: F, cmd: Command, env: NodeJS.ProcessEnv): F {
  return cmd.getOptionValueSource('lexicon') === 'config' ? lexiconBesideConfig(flags, env) : flags;
}

/**
 * The rule of {@link configRelativePaths} for a `lexicon` known to come from the config file
 * (also a `tts batch` job's that its line does not set, §9): a relative path is made relative to
 * the config file's folder.
 * @returns `flags`, adjusted in place.
 */
export function lexiconBesideConfig<F extends { lexicon?: string | boolean | undefined }>(flags: F, env: NodeJS.ProcessEnv): F {
  if (typeof flags.lexicon === 'string' && !isAbsolute(flags.lexicon)) flags.lexicon = resolve(dirname(configPath(env)), flags.lexicon);
  return flags;
}

/**
 * The files a run reads besides its text (docs/cli.md §1 "Text input", §7, §11.3), which no
 * output may be: the config file, the lexicon (`--lexicon`, a config file's already resolved
 * beside it by {@link lexiconBesideConfig}; else `lexicon.toml` beside the config file, whether it
 * exists or not; none with `--no-lexicon`) and the API key file (`--api-key-file`).
 * @returns what each is, as messages name it, and its path (undefined: none).
 */
export function settingsFiles(flags: { lexicon?: string | boolean | undefined; apiKeyFile?: string | undefined }, env: NodeJS.ProcessEnv): { what: string; path: string | undefined }[] {
  const config = configPath(env);
  return [
    { what: 'the config file', path: config },
    { what: 'the lexicon', path: flags.lexicon === false ? undefined : typeof flags.lexicon === 'string' ? flags.lexicon : defaultLexiconPath(config) },
    { what: 'the API key file', path: flags.apiKeyFile },
  ];
}
