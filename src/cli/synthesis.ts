/**
 * What `say`, `stream` and `realtime` share (docs/cli.md §1–§3): flags → one run of the client
 * core (src/speak) → an exit code, with the process-level parts the core leaves to the command
 * line: signals, notices, the spinner and the `--json` summary. The three differ only in channel
 * and default destination.
 */
import { stat } from 'node:fs/promises';
import { cacheFor } from '../cache/use.js';
import { ClosedPipeError } from '../audio/stdout-sink.js';
import { audioSeconds } from '../dsp/encoding.js';
import { bytesPerFrame, type AudioSpec } from '../dsp/spec.js';
import { EXIT, TtsError } from '../errors.js';
import { aplayCommand, assertOutputIsNotInput, planOutput, type CommandName, type OutputPlan } from '../speak/outputs.js';
import { prepareAudio, speak, type RunStats } from '../speak/run.js';
import { Progress } from '../speak/progress.js';
import { subtitleFormat } from '../speak/subtitles.js';
import { resolveService, type ServiceTarget } from '../speak/service.js';
import { openText, readLines } from '../text/read.js';
import { splitStream, splitText } from '../text/split.js';
import { cacheEnv, type SynthesisFlags } from './options.js';
import { mismatchWarning } from './mismatch.js';
import { piecesFor, speakSettings, specOf } from './speak-settings.js';
import { createReporter, formatProgress, formatRunSummary, jsonLine, reportError, startProgressDisplay, type CommandIo, type ProgressDisplay } from './report.js';

/** Signals that stop a run cleanly: Ctrl-C, `kill`/`timeout`/systemd, a closed terminal. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Exit code after a signal: 130 for SIGINT (docs/cli.md §3), 128 + number for the others. */
function signalExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGINT' ? EXIT.interrupted : 128 + (signal === 'SIGTERM' ? 15 : 1);
}

/** The `--json` summary line (docs/cli.md §1). */
export interface RunSummary {
  ok: boolean;
  /** Audio bytes delivered (headers excluded). */
  bytes: number;
  /** Seconds of audio delivered at the given rate, channels and encoding. */
  audio_seconds: number;
  /** Milliseconds from the command's start to the first audio byte handed to the output; null if none. */
  ttfa_ms: number | null;
  elapsed_ms: number;
  /** Requests made to the service (pieces answered from the cache are not requests). */
  requests: number;
  /** Pieces replayed from the piece cache (docs/cli.md §8). */
  cache_hits: number;
  item_ids: string[];
  /** File path, `-` for stdout, `speaker`, or several joined with `+`. */
  output: string;
  /** The error code, when ok is false. */
  error?: string;
  /** Subtitle cues written, with --subtitles (docs/cli.md §1). */
  cues?: number;
}

/**
 * Runs a synthesis command.
 * @returns the exit code (docs/cli.md §3); never throws.
 */
export async function runSynthesis(command: CommandName, words: string[], flags: SynthesisFlags, io: CommandIo): Promise<number> {
  const started = performance.now();
  const reporter = createReporter(io.stderr, flags);
  const stats: RunStats = { requests: 0, bytes: 0, itemIds: new Set(), firstAudioAt: undefined };
  let plan: OutputPlan | undefined;
  let target: ServiceTarget | undefined;
  const controller = new AbortController();
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (interrupted !== undefined) {
      // A second signal: leave now; process.exit takes the temporary files away (docs/cli.md §2;
      // temp-files.ts hooks the exit with signal-exit).
      process.exit(signalExitCode(signal));
    }
    interrupted = signal;
    controller.abort(new TtsError('interrupted', signal === 'SIGINT' ? 'interrupted' : `stopped by ${signal}`));
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  const spec: AudioSpec = specOf(flags);
  // The converter and the tempo changer get ready while the text is read and the service found.
  prepareAudio(command === 'realtime' ? 'realtime' : 'sse', spec, { speed: flags.speed ?? 1, volume: flags.volume ?? 1 });
  let spinner: ProgressDisplay | undefined;
  let code: number;
  const cache = cacheFor(flags, cacheEnv(flags, io.env), (l) => reporter.warn(l));
  const progress = new Progress(await progressTotal(words, flags), bytesPerFrame(spec) * spec.sampleRate, started);
  let label = 'Synthesizing…';
  // Audio arrives in many small deltas: the line is redrawn at most ten times a second.
  let shownAt = -Infinity;
  const show = (): void => {
    const now = performance.now();
    if (spinner === undefined || now - shownAt < 100) return;
    shownAt = now;
    spinner.update(`${label} ${formatProgress(progress.snapshot(now))}`);
  };
  try {
    if (command === 'realtime' && flags.api === 'openai') {
      // The OpenAI dialect has no WebSocket of ours to speak (docs/protocol.md §10; docs/cli.md §1).
      throw new TtsError('usage', '--api openai has no realtime channel: `tts realtime` speaks the native WebSocket (docs/protocol.md §4.2)', {
        hint: 'use `tts say` or `tts stream` with --api openai, or drop --api openai (TTS_API, `api` in the config) for realtime',
      });
    }
    // Writing over the text is the graver mistake: said before anything about the name.
    if (flags.output !== undefined && flags.output !== '-') await assertOutputIsNotInput(flags.output, words.length > 0 ? undefined : (flags.file ?? '-'));
    plan = planOutput(command, flags, io.stdout.isTTY === true, spec);
    if (flags.subtitles !== undefined) await checkSubtitlesPath(flags.subtitles, plan, words.length > 0 ? undefined : (flags.file ?? '-'));
    if (words.length === 0 && flags.lines !== true && (flags.file === undefined || flags.file === '-') && io.stdin.isTTY === true) {
      reporter.warn('reading text from the terminal; end with Ctrl-D');
    }
    // Said once the stop signals are handled: a test waits for it before it signals (issue 19 §6).
    if (words.length === 0 && (flags.file === undefined || flags.file === '-')) reporter.verbose('reading the text from standard input');
    const source = await textSource(words, flags, io, controller.signal);
    const text = source.text;
    const mismatch = text === undefined ? undefined : mismatchWarning(text, flags.voice, flags.language);
    if (mismatch !== undefined) reporter.warn(`warning: ${mismatch}`);
    const pieces = piecesFor(source.pieces, flags);
    target = await resolveService({
      text,
      baseUrl: flags.baseUrl,
      wsBaseUrl: flags.wsBaseUrl,
      apiKeyFile: flags.apiKeyFile,
      offline: flags.offline === true,
      env: io.env,
      warn: (l) => reporter.warn(l),
    });
    reporter.setSecret(target.apiKey);
    if (target.embedded) {
      reporter.notice(flags.offline === true ? '--offline: using the built-in offline engine' : 'no service configured (TTS_BASE_URL): using the built-in offline engine');
    }
    const outputs = plan;
    let playing = false;
    await speak({
      ...speakSettings(flags),
      channel: command === 'realtime' ? 'realtime' : 'sse',
      pieces,
      plan: outputs,
      target,
      stdout: io.stdout,
      env: io.env,
      signal: controller.signal,
      log: { verbose: (l) => reporter.verbose(l), warn: (l) => reporter.warn(l) },
      stats,
      cache,
      onPieceDone: (text, fromCache) => {
        progress.pieceDone(text, fromCache);
        show();
      },
      onOpened: async () => {
        if (outputs.stdout?.container === 'raw' || outputs.file?.container === 'raw') {
          reporter.notice(`raw ${spec.format}, ${spec.sampleRate} Hz, ${spec.channels} channel(s): play it with ${aplayCommand(spec.format, spec.sampleRate, spec.channels)}`);
        }
        spinner = await startProgressDisplay(io, flags, label);
      },
      onAudio: (bytes) => {
        progress.audio(bytes);
        if (!playing) {
          playing = true;
          label = outputs.play ? 'Playing…' : 'Writing…';
        }
        show();
      },
    });
    code = EXIT.ok;
    progress.finish();
    spinner?.stop();
    spinner = undefined;
    await cache?.settle();
    if (io.stderr.isTTY === true && flags.quiet !== true && flags.json !== true) {
      const file = plan.file;
      const wrote = file !== undefined ? `wrote ${file.path}` : plan.stdout !== undefined ? 'wrote stdout' : '';
      const container = file?.container ?? plan.stdout?.container ?? 'raw';
      reporter.warn(
        formatRunSummary({
          what: [wrote, plan.play ? 'played' : ''].filter((w) => w !== '').join(' and '),
          audioSeconds: progress.snapshot().audioSeconds,
          // WAV and raw hold the service's encoding; FLAC, MP3 and Opus are their own codecs.
          encoding: container === 'wav' || container === 'raw' ? `${container === 'wav' ? 'WAV' : 'raw'} ${spec.format}` : container === 'opus' ? 'Ogg Opus' : container.toUpperCase(),
          sampleRate: spec.sampleRate,
          channels: spec.channels,
          elapsedSeconds: (performance.now() - started) / 1000,
          requests: stats.requests - (stats.cacheHits ?? 0),
          cacheHits: stats.cacheHits ?? 0,
        }),
      );
    }
  } catch (error) {
    spinner?.stop();
    spinner = undefined;
    const err = interrupted !== undefined ? controller.signal.reason : error;
    // Only the stdout sink's own marker: an EPIPE from the network is a transport failure.
    const closedPipe = err instanceof ClosedPipeError;
    if (closedPipe) {
      code = EXIT.ok;
    } else {
      code = reportError(err, reporter);
      if (interrupted !== undefined) code = signalExitCode(interrupted);
    }
    if (flags.json === true) writeSummary(io, closedPipe ? summary(true, undefined) : summary(false, err));
    return code;
  } finally {
    spinner?.stop();
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
    // Whatever ended the run, nothing of it may keep going (requests, stdin for --lines).
    if (!controller.signal.aborted) controller.abort(new TtsError('interrupted', 'finished'));
    await target?.close().catch(() => {});
  }
  if (flags.json === true) writeSummary(io, summary(true, undefined));
  return code;

  function summary(ok: boolean, err: unknown): RunSummary {
    const s: RunSummary = {
      ok,
      bytes: stats.bytes,
      audio_seconds: Number(audioSeconds(stats.bytes, spec.format, spec.sampleRate, spec.channels).toFixed(3)),
      ttfa_ms: stats.firstAudioAt === undefined ? null : Math.round(stats.firstAudioAt - started),
      elapsed_ms: Math.round(performance.now() - started),
      requests: stats.requests - (stats.cacheHits ?? 0),
      cache_hits: stats.cacheHits ?? 0,
      item_ids: [...stats.itemIds],
      output: describeOutput(plan),
    };
    if (!ok) s.error = err instanceof TtsError ? err.code : 'internal';
    if (stats.cues !== undefined) s.cues = stats.cues;
    return s;
  }
}

/**
 * Refuses a `--subtitles` path that is not `.srt`/`.vtt`, that is the audio output, or that is
 * the file the text is read from (docs/cli.md §1).
 * @throws TtsError `usage` (exit 2).
 */
export async function checkSubtitlesPath(path: string, plan: OutputPlan, input: string | undefined): Promise<void> {
  subtitleFormat(path);
  if (plan.file !== undefined) {
    const { resolve } = await import('node:path');
    if (resolve(plan.file.path) === resolve(path)) throw new TtsError('usage', `--subtitles ${path} is the audio output (-o)`, { hint: 'give the subtitles a name of their own, e.g. speech.srt' });
  }
  await assertOutputIsNotInput(path, input, '--subtitles');
}

function writeSummary(io: CommandIo, s: RunSummary): void {
  io.stderr.write(`${jsonLine(s)}\n`);
}

function describeOutput(plan: OutputPlan | undefined): string {
  if (plan === undefined) return '';
  const parts: string[] = [];
  if (plan.file !== undefined) parts.push(plan.file.path);
  if (plan.stdout !== undefined) parts.push('-');
  if (plan.play) parts.push('speaker');
  return parts.join('+');
}

/**
 * The text to speak, as pieces of at most --max-chars: the whole input read as a stream, or with
 * `--lines` each non-empty stdin line as soon as it arrives (docs/cli.md §1). Input that is empty
 * or white space only fails here, before any service or output is opened (exit 2).
 * @returns the pieces, and the first text read (lets the built-in engine prepare for kanji).
 */
export async function textSource(words: string[], flags: SynthesisFlags, io: CommandIo, signal: AbortSignal): Promise<{ pieces: AsyncIterable<string>; text?: string }> {
  if (flags.lines === true) {
    if (words.length > 0 || (flags.file !== undefined && flags.file !== '-')) {
      throw new TtsError('usage', '--lines reads standard input; give no words and no -f FILE with it');
    }
    const lines = readLines(io.stdin, flags.maxInput, signal);
    return {
      pieces: (async function* () {
        for await (const line of lines) yield* splitText(line, flags.maxChars);
      })(),
    };
  }
  const blocks = (await openText({ words, file: flags.file, stdin: io.stdin, maxInputBytes: flags.maxInput, signal }))[Symbol.asyncIterator]();
  // Read until there is something to say (or the end), so empty text fails before anything starts.
  const head: string[] = [];
  let ended = false;
  for (;;) {
    const next = await blocks.next();
    if (next.done === true) {
      ended = true;
      break;
    }
    head.push(next.value);
    if (next.value.trim() !== '') break;
  }
  if (ended && head.every((b) => b.trim() === '')) throw new TtsError('usage', 'the text is empty', { hint: 'give some text to speak' });
  const text = head.join('');
  const rest = (async function* () {
    yield text;
    if (!ended) yield* { [Symbol.asyncIterator]: () => blocks };
  })();
  return { pieces: splitStream(rest, flags.maxChars), text };
}

/**
 * UTF-8 bytes of the whole text when known before reading it: the words' length, or the size of
 * a regular `-f` file; undefined for stdin and `--lines` (progress then shows no share).
 */
async function progressTotal(words: string[], flags: SynthesisFlags): Promise<number | undefined> {
  if (flags.lines === true) return undefined;
  if (words.length > 0) return Buffer.byteLength(words.join(' '));
  if (flags.file === undefined || flags.file === '-') return undefined;
  const info = await stat(flags.file).catch(() => undefined);
  return info?.isFile() === true ? info.size : undefined;
}
