/**
 * One synthesis command from flags to exit code: read the text, find the service, open the
 * outputs, stream audio into them, and report (DESIGN.md §1–3). Shared by `say`, `stream` and
 * `realtime`, which differ only in channel and default destination.
 */
import type { AudioSink } from '../audio/sink.js';
import type { AudioSpec } from '../dsp/spec.js';
import { rmSync } from 'node:fs';
import { audioSeconds } from '../dsp/encoding.js';
import { TtsError } from '../errors.js';
import type { AudioChunk } from '../wire/delta.js';
import { EXIT } from '../errors.js';
import { languageForVoice } from '../protocol/voices.js';
import { readText } from './input.js';
import type { SynthesisFlags } from './options.js';
import { aplayCommand, planOutput, type CommandName, type OutputPlan } from './output.js';
import { createReporter, reportError } from './report.js';
import { resolveService, type ServiceTarget } from './service.js';
import { synthesizeTexts, type OpenStream, type RequestStats } from './synthesize.js';
import type { FileSink } from '../audio/file-sink.js';
import { bytesPerFrame } from '../dsp/spec.js';
import { ClosedPipeError } from '../audio/stdout-sink.js';

/** The process's streams and environment (injectable for tests). */
export interface CommandIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** Signals that stop a run cleanly: Ctrl-C, `kill`/`timeout`/systemd, a closed terminal. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Exit code after a signal: 130 for SIGINT (DESIGN.md §3), 128 + number for the others. */
function signalExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGINT' ? EXIT.interrupted : 128 + (signal === 'SIGTERM' ? 15 : 1);
}

/** The `--json` summary line (DESIGN.md §1). */
export interface RunSummary {
  ok: boolean;
  /** Audio bytes delivered (headers excluded). */
  bytes: number;
  /** Seconds of audio delivered at the given rate, channels and encoding. */
  audio_seconds: number;
  /** Milliseconds from the command's start to the first audio byte handed to the output; null if none. */
  ttfa_ms: number | null;
  elapsed_ms: number;
  requests: number;
  item_ids: string[];
  /** File path, `-` for stdout, `speaker`, or several joined with `+`. */
  output: string;
  /** The error code, when ok is false. */
  error?: string;
}

/**
 * Runs a synthesis command.
 * @returns the exit code (DESIGN.md §3); never throws.
 */
export async function runSynthesis(command: CommandName, words: string[], flags: SynthesisFlags, io: CommandIo): Promise<number> {
  const started = performance.now();
  const reporter = createReporter(io.stderr, flags);
  const stats: RequestStats = { requests: 0 };
  const itemIds = new Set<string>();
  let bytes = 0;
  let ttfa: number | null = null;
  let plan: OutputPlan | undefined;
  let sink: AudioSink | undefined;
  let target: ServiceTarget | undefined;
  const controller = new AbortController();
  let interrupted: NodeJS.Signals | undefined;
  let tempPath: string | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (interrupted !== undefined) {
      // A second signal: leave now, but still take the temporary file away (DESIGN.md §2).
      if (tempPath !== undefined) rmSync(tempPath, { force: true });
      process.exit(signalExitCode(signal));
    }
    interrupted = signal;
    controller.abort(new TtsError('interrupted', signal === 'SIGINT' ? 'interrupted' : `stopped by ${signal}`));
    // Stop playback and drop the temp file now, not when the network layer notices.
    void sink?.abort();
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  const spec: AudioSpec = { format: flags.format, sampleRate: flags.sampleRate, channels: flags.channels };
  let spinner: { text: string; stop(): void } | undefined;
  let code: number;
  try {
    plan = planOutput(command, flags, io.stdout.isTTY === true);
    const { texts, text } = await textSource(words, flags, io, controller.signal);
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
    const opened = await openSinks(plan, spec, io, controller.signal);
    sink = opened.sink;
    tempPath = opened.file?.tempPath;
    if (plan.stdout?.container === 'raw' || plan.file?.container === 'raw') {
      reporter.notice(`raw ${spec.format}, ${spec.sampleRate} Hz, ${spec.channels} channel(s): play it with ${aplayCommand(spec.format, spec.sampleRate, spec.channels)}`);
    }
    spinner = await startSpinner(io.stderr, flags, 'Synthesizing…');
    const open = await channel(command, target, flags, (l) => reporter.verbose(l));
    const fileOnly = opened.fileOnly;
    const chunks: AsyncIterable<AudioChunk> = synthesizeTexts(texts, {
      open,
      maxChars: flags.maxChars,
      concurrency: flags.concurrency,
      retries: flags.retries,
      signal: controller.signal,
      stats,
      bytesPerSecond: bytesPerFrame(spec) * spec.sampleRate,
      rewind:
        fileOnly === undefined
          ? undefined
          : async (audioBytes) => {
              await fileOnly.truncateAudio(audioBytes);
              bytes = audioBytes;
            },
      verbose: (l) => reporter.verbose(l),
      warn: (l) => reporter.warn(l),
    });
    for await (const chunk of chunks) {
      if (chunk.itemId !== undefined) itemIds.add(chunk.itemId);
      if (chunk.data.length === 0) continue;
      if (ttfa === null) {
        ttfa = performance.now() - started;
        if (spinner !== undefined) spinner.text = plan.play ? 'Playing…' : 'Writing…';
      }
      await sink.write(chunk.data);
      bytes += chunk.data.length;
    }
    if (controller.signal.aborted) throw controller.signal.reason;
    await sink.finish();
    code = EXIT.ok;
  } catch (error) {
    spinner?.stop();
    spinner = undefined;
    await sink?.abort().catch(() => {});
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
      bytes,
      audio_seconds: Number(audioSeconds(bytes, spec.format, spec.sampleRate, spec.channels).toFixed(3)),
      ttfa_ms: ttfa === null ? null : Math.round(ttfa),
      elapsed_ms: Math.round(performance.now() - started),
      requests: stats.requests,
      item_ids: [...itemIds],
      output: describeOutput(plan),
    };
    if (!ok) s.error = err instanceof TtsError ? err.code : 'internal';
    return s;
  }
}

function writeSummary(io: CommandIo, s: RunSummary): void {
  io.stderr.write(`${JSON.stringify(s)}\n`);
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
 * Opens every destination. The sound card is opened first, so a missing `speaker` or device
 * fails (exit 7) before any request is made.
 */
async function openSinks(plan: OutputPlan, spec: AudioSpec, io: CommandIo, signal: AbortSignal): Promise<{ sink: AudioSink; file: FileSink | undefined; fileOnly: FileSink | undefined }> {
  const sinks: AudioSink[] = [];
  let file: FileSink | undefined;
  try {
    if (plan.play) {
      const { openSpeakerSink } = await import('../audio/speaker-sink.js');
      sinks.push(await openSpeakerSink(spec));
    }
    const special = plan.file === undefined ? undefined : await specialFile(plan.file.path);
    if (plan.file !== undefined && special !== undefined) {
      // A FIFO or device (`-o /dev/null`, `-o pipe`) is written in place, like stdout: renaming
      // a temporary file over it would replace the node itself.
      const { createStdoutSink } = await import('../audio/stdout-sink.js');
      sinks.push(createStdoutSink(spec, plan.file.container, await openSpecialFile(plan.file.path, special, signal)));
    } else if (plan.file !== undefined) {
      const { openFileSink } = await import('../audio/file-sink.js');
      file = await openFileSink(plan.file.path, spec, plan.file.container);
      sinks.push(file);
    }
    if (plan.stdout !== undefined) {
      const { createStdoutSink } = await import('../audio/stdout-sink.js');
      sinks.push(createStdoutSink(spec, plan.stdout.container, io.stdout));
    }
  } catch (error) {
    await Promise.all(sinks.map((s) => s.abort().catch(() => {})));
    throw error;
  }
  if (sinks.length === 1) return { sink: sinks[0]!, file, fileOnly: file };
  const { teeSink } = await import('../audio/sink.js');
  return { sink: teeSink(sinks), file, fileOnly: undefined };
}

/** What is at `path` when it exists and is neither a regular file nor a folder (a FIFO, a device). */
async function specialFile(path: string): Promise<'fifo' | 'device' | undefined> {
  const { stat } = await import('node:fs/promises');
  try {
    const info = await stat(path);
    if (info.isFIFO()) return 'fifo';
    return info.isFile() || info.isDirectory() ? undefined : 'device';
  } catch {
    return undefined;
  }
}

/**
 * Opens a FIFO or device for writing. A FIFO is opened non-blocking, waiting (abortably) for a
 * reader: a plain open would block a libuv thread until one came, and with it the process's exit
 * even after Ctrl-C. Its descriptor becomes a libuv pipe stream, as stdout's would.
 * @throws TtsError `io_error` (exit 7) when it cannot be opened.
 */
async function openSpecialFile(path: string, kind: 'fifo' | 'device', signal: AbortSignal): Promise<NodeJS.WritableStream> {
  const [{ constants, createWriteStream, openSync }, { Socket }, { sleep }] = await Promise.all([import('node:fs'), import('node:net'), import('../client/retry.js')]);
  if (kind === 'device') return createWriteStream(path, { flags: 'w' });
  for (;;) {
    try {
      const fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
      return new Socket({ fd, readable: false, writable: true });
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'ENXIO') {
        throw new TtsError('io_error', `cannot write to ${path} (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause });
      }
      // ENXIO: nobody reads the FIFO yet.
      await sleep(0.05, signal);
    }
  }
}

/**
 * The texts to speak: the whole input once, or with `--lines` each non-empty stdin line as
 * soon as it arrives (DESIGN.md §1).
 */
async function textSource(words: string[], flags: SynthesisFlags, io: CommandIo, signal: AbortSignal): Promise<{ texts: AsyncIterable<string>; text?: string }> {
  if (flags.lines !== true) {
    const text = await readText({ words, file: flags.file, stdin: io.stdin });
    const texts = (async function* () {
      yield text;
    })();
    return { texts, text };
  }
  if (words.length > 0 || (flags.file !== undefined && flags.file !== '-')) {
    throw new TtsError('usage', '--lines reads standard input; give no words and no -f FILE with it');
  }
  const { stdinLines } = await import('./lines.js');
  return { texts: stdinLines(io.stdin, signal) };
}

/** The request opener of the command's channel: SSE for say/stream, WebSocket for realtime. */
async function channel(command: CommandName, target: ServiceTarget, flags: SynthesisFlags, verbose: (line: string) => void): Promise<OpenStream> {
  const language = flags.language ?? languageForVoice(flags.voice);
  const timeoutMs = flags.timeout * 1000;
  const allowInsecure = flags.allowInsecure === true;
  if (command === 'realtime') {
    const { streamRealtime } = await import('../client/realtime.js');
    return (text, signal) =>
      streamRealtime({
        wsBaseUrl: target.wsBaseUrl,
        apiKey: target.apiKey,
        session: {
          voice: flags.voice,
          input_text: text,
          output_audio_format: flags.format,
          output_audio_sample_rate: flags.sampleRate,
          output_audio_number_of_channels: flags.channels,
          language: language as 'ja' | 'en',
        },
        timeoutMs,
        signal,
        allowInsecure,
        verbose,
      });
  }
  const { streamSse } = await import('../client/sse.js');
  return (text, signal) =>
    streamSse({
      baseUrl: target.baseUrl,
      apiKey: target.apiKey,
      body: { input: text, voice: flags.voice, response_format: flags.format, language: language as 'ja' | 'en' },
      timeoutMs,
      signal,
      allowInsecure,
      verbose,
    });
}

async function startSpinner(
  stderr: NodeJS.WritableStream & { isTTY?: boolean },
  flags: SynthesisFlags,
  text: string,
): Promise<{ text: string; stop(): void } | undefined> {
  if (stderr.isTTY !== true || flags.quiet === true || flags.verbose === true) return undefined;
  const { default: ora } = await import('ora');
  return ora({ text, stream: stderr as NodeJS.WritableStream & { isTTY: boolean } as never, discardStdin: false }).start();
}

