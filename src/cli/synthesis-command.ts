/**
 * The synthesis commands' shape (docs/cli.md §1): the shared flags, and the one factory `say`,
 * `stream` and `realtime` call with their own name, summary and channel. The action loads the
 * synthesis code (synthesis.ts) only when it runs, so `--help` and other commands stay fast.
 */
import { Option, type Command } from 'commander';
import { AUDIO_FORMATS } from '../protocol/types.js';
import { CONTAINERS } from '../audio/containers/registry.js';
import { DEFAULT_VOICE } from '../protocol/voices.js';
import { PLAYER_NAMES } from '../audio/players.js';
import { INPUT_FORMATS } from '../text/documents/formats.js';
import { configRelativePaths, softenConfigDefaults } from './config-defaults.js';
import { bytesIn, castOf, chapterRangeOf, DEFAULT_MAX_INPUT_BYTES, intIn, numberIn, secondsIn, serviceFormat, type CommandDone, type SynthesisCommandSpec, type SynthesisFlags } from './flags.js';
import type { CommandIo } from './report.js';
import { looksLikeSsml } from './ssml-input.js';
import type { EarlyEngine } from '../server/embedded-engine.js';

/** Adds the synthesis flags of docs/cli.md §1 (and the document flags of §10) to a command. */
export function addSynthesisOptions(cmd: Command): Command {
  return cmd
    .option('-v, --voice <id>', 'preset voice id, e.g. ja-man-1, en-woman-1', DEFAULT_VOICE)
    .option('-l, --language <ja|en>', 'language of the text (default: from the voice prefix)')
    .addOption(new Option('--format <encoding>', `audio encoding requested from the service (${AUDIO_FORMATS.join('|')})`).argParser(serviceFormat).default('pcm16'))
    .option('-r, --sample-rate <hz>', 'sample rate of the audio, in Hz', intIn(1000, 192_000, '--sample-rate'), 24000)
    .option('-c, --channels <n>', 'number of channels', intIn(1, 8, '--channels'), 1)
    .option('-o, --output <path>', 'write audio here; the extension picks the container (.wav .raw .pcm .flac .mp3 .ogg .opus); - = stdout')
    .addOption(new Option('--wav', 'write a WAV container whatever the name').conflicts('raw'))
    .option('--raw', 'write raw samples whatever the name')
    .addOption(new Option('--container <name>', 'container of the file or stdout, whatever the name').choices(CONTAINERS))
    .option('--bitrate <kbps>', 'bit rate of MP3 or Opus, kbit/s (default 48/channel for MP3, 24 mono / 32 stereo for Opus)', intIn(1, 1000, '--bitrate'))
    .option('--play', 'play on the sound card too (with -o)')
    .option('-f, --file <path>', 'read the text from a file (- = stdin)')
    .option('--lines', 'read stdin line by line and speak each line as it arrives')
    .addOption(new Option('--max-input <size>', 'refuse a text larger than this (bytes, or e.g. 64MiB)').argParser(bytesIn(1, 2 ** 40, '--max-input')).default(DEFAULT_MAX_INPUT_BYTES, '64MiB'))
    .option('--max-chars <n>', 'longest text per request; longer text is split at sentence ends', intIn(1, 1_000_000, '--max-chars'), 1000)
    .option('--concurrency <n>', 'requests in flight at once for split text', intIn(1, 32, '--concurrency'), 2)
    .option('--retries <n>', 'retries of a request on limits, 408, 5xx or network errors', intIn(0, 20, '--retries'), 2)
    .option('--timeout <sec>', 'limit for connect + first audio, and for silence between audio deltas (keep-alives do not count)', secondsIn('--timeout'), 30)
    .option('-q, --quiet', 'no spinner or notices')
    .option('--verbose', 'protocol detail on stderr (the API key is always redacted)')
    .option('--json', 'print one JSON summary line on stderr at the end')
    .option('--base-url <url>', 'HTTP base URL of the service (env TTS_BASE_URL)')
    .option('--ws-base-url <url>', 'WebSocket base URL (env TTS_WS_BASE_URL; default from the HTTP base)')
    .option('--api-key-file <path>', 'read the API key from this file (first line)')
    .option('--offline', 'use the built-in offline engine even if a service is configured')
    .option('--allow-insecure', 'allow sending the key over http:// or ws:// to a non-loopback host')
    .addOption(new Option('--player <name>', 'how to play: speaker, or a system player (pw-play, paplay, aplay, ffplay, play)').choices(PLAYER_NAMES).default('auto'))
    .option('--profile <name>', 'use [profile.NAME] of the config file (env TTS_PROFILE)')
    .option('--speed <x>', 'speech tempo, pitch kept: 0.5 to 3 (1 = unchanged)', numberIn(0.5, 3, '--speed'))
    .option('--volume <x>', 'linear gain: above 0, at most 4 (1 = unchanged); peaks are limited', numberIn(0, 4, '--volume', { above: true }))
    .option('--pause <ms>', 'silence between sentences, 1 to 10000 ms (text is requested sentence by sentence)', numberIn(1, 10_000, '--pause', { whole: true }))
    .option('--subtitles <file>', 'write one subtitle cue per sentence to FILE.srt or FILE.vtt')
    .option('--words', 'with --subtitles: time each word (WebVTT: karaoke timestamps; SRT: one cue per word)')
    .option('--word-timings <file>', 'write each word\'s start and end (seconds) to FILE.jsonl')
    .option('--no-cache', 'neither read nor store pieces in the piece cache (env TTS_NO_CACHE=1)')
    .option('--cache', 'use the piece cache even when the config file or TTS_NO_CACHE turns it off')
    .option('--cache-size <size>', 'size cap of the piece cache; least recently used pieces go first (default 1GiB)', bytesIn(0, 2 ** 50, '--cache-size'))
    .addOption(new Option('--api <dialect>', 'the service\'s dialect: native (docs/protocol.md) or openai (POST /v1/audio/speech)').choices(['native', 'openai']).env('TTS_API').default('native'))
    .option('--model <name>', 'model asked for with --api openai', 'tts-1')
    // Documents (docs/cli.md §10).
    .addOption(new Option('--input-format <format>', 'read the input as text, markdown, html, epub, ssml or script (default: by the -f extension, .script.txt a dialogue script; text starting with <speak is SSML)').choices(INPUT_FORMATS))
    .option('--ssml-lenient', 'SSML: speak the text of elements tts does not read (and ignore unknown attributes) instead of failing')
    .option('--chapter-level <n>', 'headings of this level or above start chapters (default: 1 for EPUB tables of contents, 2 for Markdown/HTML)', intIn(1, 6, '--chapter-level'))
    .option('--chapters <file.vtt>', 'write the chapters as a WebVTT chapters track')
    .option('--split-chapters <dir>', 'write one numbered file per chapter into DIR (e.g. "01 Introduction.mp3"; --container picks the format, default mp3)')
    .option('--chapter-range <a-b>', 'speak only these chapters (1-based, e.g. 2-4, 3-, 5)', chapterRangeOf)
    .option('--code-phrase <text>', 'say this for each skipped code block (default: nothing)')
    // Controlling speech (docs/cli.md §11).
    .option('--cast <name=voice,...>', 'voices of a dialogue script\'s speakers, e.g. Alice=en-woman-1,Bob=en-man-1 (over [voices] in the config file)', castOf)
    .option('--lexicon <file>', 'pronunciation lexicon (TOML; default: lexicon.toml beside the config file)')
    .option('--no-lexicon', 'use no lexicon, not even lexicon.toml')
    .option('--print-text', 'print the text as it will be spoken, one sentence per line, on stdout; synthesize nothing')
    .option('--dry-run', 'the same as --print-text');
}

/**
 * Adds one synthesis command with the shared flags; `say` is the default command: `tts "hello"`
 * speaks (docs/cli.md §1).
 */
export function synthesisCommand(program: Command, spec: SynthesisCommandSpec, io: CommandIo, done: CommandDone): Command {
  const { name, summary } = spec;
  return addSynthesisOptions(program.command(name, { isDefault: name === 'say' }).argument('[text...]', 'text to speak (default: stdin)').description(summary)).action(
    async (words: string[], flags: SynthesisFlags, cmd: Command) => {
      // The voice, when the command line or TTS_VOICE chose it (the config file's is not read yet): a hint for the engine.
      const source = cmd.getOptionValueSource('voice');
      const early = await startEngineEarly(words, flags, io, source === 'cli' || source === 'env' ? flags.voice : undefined);
      try {
        const { runSynthesisCommand } = await import('./synthesis.js');
        done(await runSynthesisCommand(spec, words, configRelativePaths(softenConfigDefaults(flags, cmd, words), cmd, io.env), io, early));
      } finally {
        await early?.release();
      }
    },
  );
}

/**
 * Starts the embedded service's engine before the run's code is loaded (issue 20: its worker
 * thread boots and Flite compiles while the synthesis, output and service modules load), for a
 * run that will surely use it with a text known now: plain text on the command line, spoken (not
 * printed) through the built-in service (server/embedded-engine.ts). Any other run — text from a
 * file or stdin, a document, SSML, a script, chapters, a remote service — starts it where it
 * always did, once its text is read.
 * `voice` (a voice id given on the command line or by TTS_VOICE, when it was) lets the worker read
 * that voice's data ahead (a hint only: the job says which voice speaks).
 * @returns the started engine, which the run's embedded service takes; undefined when not started
 *   (also when it could not start: the run then starts one itself and reports the failure). Never throws.
 */
async function startEngineEarly(words: string[], flags: SynthesisFlags, io: CommandIo, voice: string | undefined): Promise<EarlyEngine | undefined> {
  const { env } = io;
  const text = words.join(' ');
  const plain =
    words.length > 0 &&
    flags.file === undefined &&
    flags.lines !== true &&
    flags.printText !== true &&
    flags.dryRun !== true &&
    flags.splitChapters === undefined &&
    (flags.inputFormat === undefined || flags.inputFormat === 'text') &&
    !looksLikeSsml(text);
  if (!plain) return undefined;
  try {
    const { embeddedServiceChosen } = await import('../speak/choose-service.js');
    if (!embeddedServiceChosen({ baseUrl: flags.baseUrl, offline: flags.offline === true, env })) return undefined;
    const { EarlyEngine } = await import('../server/embedded-engine.js');
    return new EarlyEngine(text, undefined, voice);
  } catch {
    // The run starts its engine where it always did, and reports what went wrong there.
    return undefined;
  }
}
