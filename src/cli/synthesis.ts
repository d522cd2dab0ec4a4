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
import { assertOutputIsNotInput, assertOutputsAreNotSettings, assertSideOutputIsNotStdout, assertStdoutIsNotInput, checkSubtitlesPath, checkWordOptions } from '../speak/output-checks.js';
import { deliverSpeech, prepareAudio, type RunStats } from '../speak/run.js';
import { Progress } from '../speak/progress.js';
import { resolveService, type ServiceTarget } from '../speak/choose-service.js';
import { knownTextBytes, textSource } from '../text/source.js';
import { lexiconFor, rewritePieces, sharedGrowthBound, type MappedRewrite } from '../text/lexicon.js';
import { configPath } from './config-file.js';
import type { Language } from '../protocol/types.js';
import { cacheEnv, settingsFiles } from './config-defaults.js';
import type { SynthesisCommandSpec, SynthesisFlags } from './flags.js';
import { mismatchWarning } from './mismatch.js';
import { piecesFor, speakSettings, specOf } from './speak-settings.js';
import { createReporter, type CommandIo } from './report.js';
import { formatProgress, formatRunSummary } from './run-lines.js';
import { startProgressDisplay, type ProgressDisplay } from './progress-display.js';
import { runLifecycle } from './run-lifecycle.js';
import { checkChapterPaths, documentSource, finishDocument, finishMarkChapters, openChaptersInPlace, printSpokenText, splitChapters, type DocumentSource } from './document-run.js';
import { ssmlByName, ssmlSpansOf } from './ssml-input.js';
import { scriptByName, scriptSpansOf } from './script-input.js';
import type { SpanList } from '../text/span-list.js';
import type { SpanSettings } from '../text/spans.js';
import type { EarlyEngine } from '../server/embedded-engine.js';
import type { InteractiveSession } from '../player/interactive.js';
import { inBackground, interactiveMode } from '../player/mode.js';
import { assertGivenDescriptor, assertNotStandardInput, sharesTerminal } from '../audio/special-files.js';
import { PlayerStopped } from '../player/stopped.js';

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
  /** A dialogue script's turns, in seconds of the audio (docs/cli.md §11.2). */
  turns?: { speaker: string; voice: string; start: number; end: number }[];
  /** The chapters heard, in seconds (a document; docs/cli.md §10). */
  chapters?: { title: string; start: number; end: number }[];
  /** The SSML marks reached, with their times in seconds (3 decimals; docs/cli.md §11.1). */
  marks?: { name: string; time: number }[];
}

/**
 * Refuses the flags of one `--split-chapters` chapter's run (words, into a file) as that run
 * would: its output plan (container, channels, bit rate), `--words` and `--cast`.
 * @throws TtsError `usage` (exit 2).
 */
async function checkChapterRun(command: SynthesisCommandSpec, flags: SynthesisFlags): Promise<void> {
  const plan = planOutput(command.name, flags, false, specOf(flags));
  await checkWordOptions(flags, plan, undefined);
  scriptByName(['chapter'], flags);
}

/**
 * Runs a synthesis command: one run of the client core with its progress, notices and summary.
 * @param early the embedded engine, started for this run before this module loaded
 *   (synthesis-command.ts): its embedded service takes it; its caller releases it after the run.
 * @returns the exit code (docs/cli.md §3); never throws.
 */
export async function runSynthesisCommand(command: SynthesisCommandSpec, words: string[], flags: SynthesisFlags, io: CommandIo, early?: EarlyEngine): Promise<number> {
  const started = performance.now();
  const reporter = createReporter(io.stderr, flags);
  if (flags.printText === true || flags.dryRun === true || flags.splitChapters !== undefined) {
    // Documents (docs/cli.md §10): print the spoken text, or one run per chapter.
    return runLifecycle({ reporter, io }, async ({ signal }) => {
      if (flags.splitChapters === undefined) return printSpokenText(words, flags, io, signal, (l) => reporter.verbose(l), await runLexicon(flags, io.env));
      return splitChapters(words, flags, io, signal, (text, output, f) => runSynthesisCommand(command, [text], { ...f, output }, io), (output, f) => checkChapterRun(command, { ...f, output }), (l) => reporter.warn(l));
    });
  }
  const stats: RunStats = { requests: 0, bytes: 0, itemIds: new Set(), firstAudioAt: undefined };
  const spec: AudioSpec = specOf(flags);
  let plan: OutputPlan | undefined;
  let chapters: { title: string; start: number; end: number }[] | undefined;
  /** A dialogue script's turns as heard (docs/cli.md §11.2), for `--json`. */
  let turns: { speaker: string; voice: string; start: number; end: number }[] | undefined;
  let lastTurnSpan: SpanSettings | undefined;
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
    if (turns !== undefined) s.turns = turns;
    if (stats.marks !== undefined) s.marks = stats.marks.map((m) => ({ name: m.name, time: Number(m.time.toFixed(3)) }));
    return s;
  };
  // Only the stdout sink's own marker ends the run quietly: an EPIPE from the network is a transport failure.
  // `q` in the player (docs/cli.md §12.2) ends the run as asked: exit 0.
  const quietEnd = (err: unknown): number | undefined => (err instanceof ClosedPipeError || err instanceof PlayerStopped ? EXIT.ok : undefined);
  return runLifecycle({ reporter, io, quietEnd, summary, afterFailure }, async ({ signal, atEnd }) => {
    // The converter and the tempo changer get ready while the text is read and the service found.
    prepareAudio(command.channel, spec, { speed: flags.speed ?? 1, volume: flags.volume ?? 1 });
    let spinner: ProgressDisplay | undefined;
    let interactive: InteractiveSession | undefined;
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
      // `/dev/fd/N` must be a descriptor the run was given, not one of tts's own (docs/cli.md §1).
      if (flags.file !== undefined && flags.file !== '-') assertGivenDescriptor(flags.file, '-f', 'read');
      if (flags.output !== undefined && flags.output !== '-') assertGivenDescriptor(flags.output, '-o', 'write');
      // Nor the pipe on standard input, which this run reads (the text given as words).
      if (flags.output !== undefined && flags.output !== '-') await assertNotStandardInput(flags.output, '-o');
      plan = planOutput(command.name, flags, io.stdout.isTTY === true, spec);
      if (plan.stdout !== undefined) {
        const fd = (io.stdout as { fd?: unknown }).fd;
        await assertStdoutIsNotInput(typeof fd === 'number' ? fd : undefined, input);
        for (const [flag, path] of [['--subtitles', flags.subtitles], ['--word-timings', flags.wordTimings], ['--chapters', flags.chapters]] as const) {
          if (path !== undefined) await assertSideOutputIsNotStdout(path, typeof fd === 'number' ? fd : undefined, flag);
        }
      }
      if (flags.subtitles !== undefined) await checkSubtitlesPath(flags.subtitles, plan, input);
      await checkWordOptions(flags, plan, input);
      if (words.length === 0 && flags.lines !== true && (flags.file === undefined || flags.file === '-') && io.stdin.isTTY === true) {
        reporter.warn('reading text from the terminal; end with Ctrl-D');
      }
      // Said once the stop signals are handled: a test waits for it before it signals (issue 19 §6).
      if (words.length === 0 && (flags.file === undefined || flags.file === '-')) reporter.verbose('reading the text from standard input');
      // By inode too, as -o: a link to the document is the document (docs/cli.md §10 `--chapters`).
      if (flags.chapters !== undefined) await assertOutputIsNotInput(flags.chapters, input, '--chapters');
      await checkChapterPaths(flags);
      // Nor over the files read besides the text: the config file, the lexicon, the API key file.
      await assertOutputsAreNotSettings(
        [
          { named: '-o', path: flags.output === '-' ? undefined : flags.output },
          { named: '--subtitles', path: flags.subtitles },
          { named: '--word-timings', path: flags.wordTimings },
          { named: '--chapters', path: flags.chapters },
        ],
        settingsFiles(flags, io.env),
      );
      ssmlByName(words, flags);
      const isScript = scriptByName(words, flags);
      // The lexicon is read before any text or service: a bad file is exit 2 with nothing done (docs/cli.md §11.3).
      const rewrite = await runLexicon(flags, io.env);
      // An input read whole is rewritten in parts that share one growth bound; plain text, piece by piece.
      const wholeRewrite = rewrite === undefined ? undefined : { ...rewrite, apply: sharedGrowthBound(rewrite.apply) };
      // Subtitles, word timings or chapters written in place to the terminal stderr draws on
      // (`--word-timings /dev/stdout` with stdout that terminal, /dev/stderr, /dev/tty): a line
      // redrawn there would tear theirs, as it would --verbose's (docs/cli.md §2 "Progress", §12.2).
      const textOnTerminal = await sharesTerminal([flags.subtitles, flags.wordTimings, flags.chapters], io.stderr);
      // Only the real process has a terminal of its own to be in the background of.
      const background = (): boolean => io.stderr === process.stderr && inBackground();
      const mode =
        command.name === 'say'
          ? interactiveMode({
              stderr: io.stderr as { isTTY?: boolean; columns?: number },
              env: io.env,
              quiet: flags.quiet === true,
              verbose: flags.verbose === true || textOnTerminal,
              playOnly: plan.play && plan.file === undefined && plan.stdout === undefined,
              textFromTerminal: words.length === 0 && (flags.file === undefined || flags.file === '-') && io.stdin.isTTY === true,
              background,
            })
          : undefined;
      // The player exists before the text is read: a FIFO's writer is waited for with its keys (below).
      if (mode !== undefined) {
        const [{ openKeys }, { startInteractive }] = await Promise.all([import('../player/terminal.js'), import('../player/interactive.js')]);
        interactive = startInteractive(mode, io.stderr, io.env, openKeys, background);
      }
      // `q` in the player ends the run as Ctrl-C does, but with exit 0 (docs/cli.md §12.2).
      const runSignal = interactive === undefined ? signal : AbortSignal.any([signal, interactive.stopped]);
      document = await documentSource(words, flags, io, runSignal, (l) => reporter.verbose(l), wholeRewrite);
      // `-f FIFO` waits for its writer: the player reads its keys from then on, so that `q` ends that wait too.
      const source = document ?? (await textSource({ ...text, maxInputBytes: flags.maxInput, maxChars: flags.maxChars, stdin: io.stdin, signal: runSignal, waiting: () => interactive?.listen() }));
      if (document !== undefined) progress.setTotal(document.chapters.reduce((n, c) => n + Buffer.byteLength(c.text), 0));
      // SSML (docs/cli.md §11.1) is read whole into speech spans before anything is requested.
      // A dialogue script (§11.2) likewise, one span per turn.
      const spans: SpanList | undefined =
        document !== undefined ? undefined : isScript ? await scriptSpansOf(words, flags, source as { whole?: AsyncIterable<string> }, wholeRewrite?.apply) : await ssmlSpansOf(words, flags, source, speakSettings(flags).language, wholeRewrite?.apply);
      if (isScript) turns = [];
      const spoken = spans === undefined ? source.text : spans.head(4096);
      // Progress counts the text sent, not the markup around it.
      if (spans !== undefined) progress.setTotal(spans.textBytes);
      // Spans carry their own voices and languages: the check is for plain text in one voice.
      const mismatch = source.text === undefined || spans !== undefined ? undefined : mismatchWarning(source.text, flags.voice, flags.language);
      if (mismatch !== undefined) reporter.warn(`warning: ${mismatch}`);
      const target: ServiceTarget = await resolveService({
        text: spoken,
        baseUrl: flags.baseUrl,
        wsBaseUrl: flags.wsBaseUrl,
        baseUrlFrom: flags.baseUrlFrom,
        wsBaseUrlFrom: flags.wsBaseUrlFrom,
        apiKeyFile: flags.apiKeyFile,
        offline: flags.offline === true,
        env: io.env,
        warn: (l) => reporter.warn(l),
        early,
        timesWords: flags.words === true || flags.wordTimings !== undefined,
        signal,
      });
      atEnd(() => target.close());
      reporter.setSecret(target.apiKey);
      if (target.embedded) {
        reporter.notice(flags.offline === true ? '--offline: using the built-in offline engine' : 'no service configured (TTS_BASE_URL): using the built-in offline engine');
      }
      const outputs = plan;
      let playing = false;
      // --chapters into a FIFO, socket or device is opened now, before the first request (a FIFO
      // waits for its reader here, not after the synthesis), and written once the audio is whole.
      // The player reads its keys during that wait, so that `q` ends it too.
      const chaptersInPlace = await openChaptersInPlace(flags, { signal: runSignal, verbose: (l) => reporter.verbose(l), waiting: () => interactive?.listen() });
      if (chaptersInPlace !== undefined) atEnd(() => chaptersInPlace.abort());
      await deliverSpeech({
        ...speakSettings(flags),
        channel: command.channel,
        // Documents had the lexicon applied to their chapters (so the chapter clock counts what is
        // sent), SSML to its text nodes; plain text has it applied piece by piece here.
        ...(spans !== undefined
          ? { spans }
          : { pieces: rewrite === undefined || document !== undefined ? piecesFor(source.pieces, flags, interactive !== undefined) : rewritePieces(piecesFor(source.pieces, flags, interactive !== undefined), rewrite.apply, rewrite.language, flags.maxChars) }),
        plan: outputs,
        target,
        stdout: io.stdout,
        env: io.env,
        signal: runSignal,
        player: interactive?.wrap,
        log: { verbose: (l) => reporter.verbose(l), warn: (l) => reporter.warn(l) },
        stats,
        cache,
        onPieceEnd:
          document !== undefined
            ? (text, cue) => document?.clock.pieceEnd(text, cue)
            : turns !== undefined
              ? (_text, cue) => {
                  // A dialogue script's turns with their times (docs/cli.md §11.2 `--json`): a turn is one span.
                  if (cue?.span?.speaker === undefined || turns === undefined) return;
                  const last = turns[turns.length - 1];
                  if (last !== undefined && lastTurnSpan === cue.span) last.end = Number(cue.end.toFixed(3));
                  else turns.push({ speaker: cue.span.speaker, voice: cue.span.voice ?? flags.voice, start: Number(cue.start.toFixed(3)), end: Number(cue.end.toFixed(3)) });
                  lastTurnSpan = cue.span;
                }
              : undefined,
        onPieceDone: (text, fromCache) => {
          progress.pieceDone(text, fromCache);
          show();
        },
        onOpened: async () => {
          if (outputs.stdout?.container === 'raw' || outputs.file?.container === 'raw') {
            reporter.notice(`raw ${spec.format}, ${spec.sampleRate} Hz, ${spec.channels} channel(s): play it with ${aplayCommand(spec.format, spec.sampleRate, spec.channels)}`);
          }
          // The player's line replaces the spinner (docs/cli.md §12.2).
          if (interactive === undefined && !textOnTerminal) spinner = await startProgressDisplay(io, flags, label);
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
        chapters = (await finishDocument(document, plan, spec, stats.bytes, flags, chaptersInPlace)).map((c) => ({ title: c.title, start: Number(c.start.toFixed(3)), end: Number(c.end.toFixed(3)) }));
      }
      if (stats.marks !== undefined) {
        chapters = (await finishMarkChapters(stats.marks, plan, spec, stats.bytes, flags, chaptersInPlace))?.map((c) => ({ title: c.title, start: Number(c.start.toFixed(3)), end: Number(c.end.toFixed(3)) }));
      }
      progress.finish();
      interactive?.close();
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
      interactive?.close();
      spinner?.stop();
    }
  });
}

/** The run's lexicon (docs/cli.md §11.3) bound to its language, or undefined when there is none. */
async function runLexicon(flags: SynthesisFlags, env: NodeJS.ProcessEnv): Promise<{ apply: MappedRewrite; language: Language } | undefined> {
  const apply = await lexiconFor(flags.lexicon, configPath(env));
  return apply === undefined ? undefined : { apply, language: speakSettings(flags).language };
}

function describeOutput(plan: OutputPlan | undefined): string {
  if (plan === undefined) return '';
  const parts: string[] = [];
  if (plan.file !== undefined) parts.push(plan.file.path);
  if (plan.stdout !== undefined) parts.push('-');
  if (plan.play) parts.push('speaker');
  return parts.join('+');
}
