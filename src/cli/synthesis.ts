/**
 * What `say`, `stream` and `realtime` share (docs/cli.md §1–§3): flags → one run of the client
 * core (src/speak) → an exit code, with the process-level parts the core leaves to the command
 * line: signals, notices, the spinner and the `--json` summary. The three differ only in channel
 * and default destination.
 */
import { cacheFor } from '../cache/use.js';
import { ClosedPipeError } from '../audio/stdout-sink.js';
import { audioSeconds } from '../dsp/encoding.js';
import { bytesPerFrame, type AudioSpec } from '../dsp/spec.js';
import { EXIT, TtsError } from '../errors.js';
import { aplayCommand, planOutput, type OutputPlan } from '../speak/output-plan.js';
import { assertOutputIsNotInput, checkSubtitlesPath, checkWordOptions } from '../speak/output-checks.js';
import { deliverSpeech, prepareAudio, type RunStats } from '../speak/run.js';
import { Progress } from '../speak/progress.js';
import { resolveService, type ServiceTarget } from '../speak/choose-service.js';
import { knownTextBytes, textSource } from '../text/source.js';
import { cacheEnv } from './config-defaults.js';
import type { SynthesisCommandSpec, SynthesisFlags } from './flags.js';
import { mismatchWarning } from './mismatch.js';
import { piecesFor, speakSettings, specOf } from './speak-settings.js';
import { createReporter, type CommandIo } from './report.js';
import { formatProgress, formatRunSummary } from './run-lines.js';
import { startProgressDisplay, type ProgressDisplay } from './progress-display.js';
import { runLifecycle } from './run-lifecycle.js';
import { checkChapterPaths, documentSource, finishDocument, printSpokenText, splitChapters, type DocumentSource } from './document-run.js';

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
  /** Words timed, with --words or --word-timings (docs/cli.md §12.1). */
  words?: number;
  /** The chapters heard, in seconds (a document; docs/cli.md §10). */
  chapters?: { title: string; start: number; end: number }[];
}

/**
 * Runs a synthesis command: one run of the client core with its progress, notices and summary.
 * @returns the exit code (docs/cli.md §3); never throws.
 */
export async function runSynthesisCommand(command: SynthesisCommandSpec, words: string[], flags: SynthesisFlags, io: CommandIo): Promise<number> {
  const started = performance.now();
  const reporter = createReporter(io.stderr, flags);
  if (flags.printText === true || flags.dryRun === true || flags.splitChapters !== undefined) {
    // Documents (docs/cli.md §10): print the spoken text, or one run per chapter.
    return runLifecycle({ reporter, io }, async ({ signal }) => {
      if (flags.splitChapters === undefined) return printSpokenText(words, flags, io, signal, (l) => reporter.verbose(l));
      return splitChapters(words, flags, io, signal, (text, output, f) => runSynthesisCommand(command, [text], { ...f, output }, io), (l) => reporter.warn(l));
    });
  }
  const stats: RunStats = { requests: 0, bytes: 0, itemIds: new Set(), firstAudioAt: undefined };
  const spec: AudioSpec = specOf(flags);
  let plan: OutputPlan | undefined;
  let chapters: { title: string; start: number; end: number }[] | undefined;
  let document: DocumentSource | undefined;
  /** The chapter being read (` · chapter 3: Title`), '' for plain text or before the first (docs/cli.md §10). */
  const chapterNote = (): string => {
    const at = document?.clock.current ?? -1;
    return document === undefined || at < 0 ? '' : ` · chapter ${document.firstIndex + at + 1}: ${document.clock.titles[at]}`;
  };
  // A document that fails or is interrupted says where it stopped (docs/cli.md §10 "Progress and summaries").
  const afterFailure = (): void => {
    if (chapterNote() !== '') reporter.warn(`stopped in ${chapterNote().slice(3)}`);
  };
  const summary = (ok: boolean, err: unknown): RunSummary | undefined => {
    if (flags.json !== true) return undefined;
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
    if (stats.words !== undefined) s.words = stats.words;
    if (chapters !== undefined) s.chapters = chapters;
    return s;
  };
  // Only the stdout sink's own marker ends the run quietly: an EPIPE from the network is a transport failure.
  const quietEnd = (err: unknown): number | undefined => (err instanceof ClosedPipeError ? EXIT.ok : undefined);
  return runLifecycle({ reporter, io, quietEnd, summary, afterFailure }, async ({ signal, atEnd }) => {
    // The converter and the tempo changer get ready while the text is read and the service found.
    prepareAudio(command.channel, spec, { speed: flags.speed ?? 1, volume: flags.volume ?? 1 });
    let spinner: ProgressDisplay | undefined;
    const cache = cacheFor(flags, cacheEnv(flags, io.env), (l) => reporter.warn(l));
    const text = { words, file: flags.file, lines: flags.lines === true };
    const progress = new Progress(await knownTextBytes(text), bytesPerFrame(spec) * spec.sampleRate, started);
    let label = 'Synthesizing…';
    // Audio arrives in many small deltas: the line is redrawn at most ten times a second.
    let shownAt = -Infinity;
    const show = (): void => {
      const now = performance.now();
      if (spinner === undefined || now - shownAt < 100) return;
      shownAt = now;
      spinner.update(`${label} ${formatProgress(progress.snapshot(now))}${chapterNote()}`);
    };
    try {
      if (command.channel === 'realtime' && flags.api === 'openai') {
        // The OpenAI dialect has no WebSocket of ours to speak (docs/protocol.md §10; docs/cli.md §1).
        throw new TtsError('usage', '--api openai has no realtime channel: `tts realtime` speaks the native WebSocket (docs/protocol.md §4.2)', {
          hint: 'use `tts say` or `tts stream` with --api openai, or drop --api openai (TTS_API, `api` in the config) for realtime',
        });
      }
      // Writing over the text is the graver mistake: said before anything about the name.
      const input = words.length > 0 ? undefined : (flags.file ?? '-');
      if (flags.output !== undefined && flags.output !== '-') await assertOutputIsNotInput(flags.output, input);
      plan = planOutput(command.name, flags, io.stdout.isTTY === true, spec);
      if (flags.subtitles !== undefined) await checkSubtitlesPath(flags.subtitles, plan, input);
      await checkWordOptions(flags, plan, input);
      if (words.length === 0 && flags.lines !== true && (flags.file === undefined || flags.file === '-') && io.stdin.isTTY === true) {
        reporter.warn('reading text from the terminal; end with Ctrl-D');
      }
      // Said once the stop signals are handled: a test waits for it before it signals (issue 19 §6).
      if (words.length === 0 && (flags.file === undefined || flags.file === '-')) reporter.verbose('reading the text from standard input');
      checkChapterPaths(flags);
      document = await documentSource(words, flags, io, signal, (l) => reporter.verbose(l));
      const source = document ?? (await textSource({ ...text, maxInputBytes: flags.maxInput, maxChars: flags.maxChars, stdin: io.stdin, signal }));
      if (document !== undefined) progress.setTotal(document.chapters.reduce((n, c) => n + Buffer.byteLength(c.text), 0));
      const mismatch = source.text === undefined ? undefined : mismatchWarning(source.text, flags.voice, flags.language);
      if (mismatch !== undefined) reporter.warn(`warning: ${mismatch}`);
      const target: ServiceTarget = await resolveService({
        text: source.text,
        baseUrl: flags.baseUrl,
        wsBaseUrl: flags.wsBaseUrl,
        apiKeyFile: flags.apiKeyFile,
        offline: flags.offline === true,
        env: io.env,
        warn: (l) => reporter.warn(l),
      });
      atEnd(() => target.close());
      reporter.setSecret(target.apiKey);
      if (target.embedded) {
        reporter.notice(flags.offline === true ? '--offline: using the built-in offline engine' : 'no service configured (TTS_BASE_URL): using the built-in offline engine');
      }
      const outputs = plan;
      let playing = false;
      await deliverSpeech({
        ...speakSettings(flags),
        channel: command.channel,
        pieces: piecesFor(source.pieces, flags),
        plan: outputs,
        target,
        stdout: io.stdout,
        env: io.env,
        signal,
        log: { verbose: (l) => reporter.verbose(l), warn: (l) => reporter.warn(l) },
        stats,
        cache,
        onPieceEnd: document === undefined ? undefined : (text, cue) => document?.clock.pieceEnd(text, cue),
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
      if (document !== undefined) {
        chapters = (await finishDocument(document, plan, spec, stats.bytes, flags)).map((c) => ({ title: c.title, start: Number(c.start.toFixed(3)), end: Number(c.end.toFixed(3)) }));
      }
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
          }) + (chapters === undefined ? '' : ` · ${chapters.length} chapter${chapters.length === 1 ? '' : 's'}`),
        );
      }
      return EXIT.ok;
    } finally {
      spinner?.stop();
    }
  });
}

function describeOutput(plan: OutputPlan | undefined): string {
  if (plan === undefined) return '';
  const parts: string[] = [];
  if (plan.file !== undefined) parts.push(plan.file.path);
  if (plan.stdout !== undefined) parts.push('-');
  if (plan.play) parts.push('speaker');
  return parts.join('+');
}
