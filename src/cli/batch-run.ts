/**
 * Running `tts batch FILE.jsonl` and `tts batch --lines FILE --output-dir DIR` (docs/cli.md §9): many
 * syntheses in one process, `--jobs N` at once, sharing the service (its connections, or the
 * one built-in engine) and the piece cache. Each job is one run of the client core (src/speak
 * run.ts `deliverSpeech`) into its own file. A failing line is reported with its line number and stops
 * no other; the exit code is the most severe of all lines.
 */
import { makeOutputFolder } from '../audio/output-target.js';
import type { Command } from 'commander';
import { cacheFor } from '../cache/use.js';
import { audioSeconds } from '../dsp/encoding.js';
import { EXIT, TtsError } from '../errors.js';
import { assertOutputIsNotInput, checkSubtitlesPath, checkWordOptions } from '../speak/output-checks.js';
import { planOutput } from '../speak/output-plan.js';
import { deliverSpeech, type RunStats } from '../speak/run.js';
import { resolveService, type ServiceTarget } from '../speak/choose-service.js';
import { textSource } from '../text/source.js';
import { inputFormatOf } from '../text/documents/formats.js';
import { ssmlSpansOf } from './ssml-input.js';
import { assertNoCollisions } from './batch-collisions.js';
import { sharesTerminal } from '../audio/special-files.js';
import { DOCUMENT_FLAGS, jsonJobs, plainJobs, readBatchLines, type BatchJob } from './batch-jobs.js';
import { cacheEnv, fitConfigDefaults, lexiconBesideConfig, markCacheForced, settingsFiles } from './config-defaults.js';
import { configPath } from './config-file.js';
import { lexiconFor, rewritePieces, sharedGrowthBound, type MappedRewrite } from '../text/lexicon.js';
import { piecesFor, speakSettings, specOf } from './speak-settings.js';
import { createReporter, reportError, type CommandIo, type Reporter } from './report.js';
import { formatClock } from './run-lines.js';
import { jsonLine } from './escape.js';
import { startProgressDisplay, type ProgressDisplay } from './progress-display.js';
import { runLifecycle } from './run-lifecycle.js';
import type { SynthesisFlags } from './flags.js';
import type { PieceAligner } from '../speak/word-source.js';

/** The flags of `tts batch`: the synthesis flags (defaults for every line) and its own. */
export interface BatchFlags extends SynthesisFlags {
  /** Jobs at once (`--jobs`). */
  jobs: number;
  /** `--output-dir`. */
  outputDir?: string;
}

/** One line's result, as `--json` prints it (one object per line, on stderr). */
export interface JobResult {
  line: number;
  ok: boolean;
  output: string;
  bytes: number;
  audio_seconds: number;
  elapsed_ms: number;
  requests: number;
  cache_hits: number;
  /** The error code, when ok is false. */
  error?: string;
  /** The exit code this line alone would have had (docs/cli.md §3). */
  exit_code: number;
}

/**
 * Exit codes from least to most severe: a batch exits with the most severe of its lines. An
 * interruption outranks everything, then a bug, then what stops every job alike (local I/O,
 * transport, limits, the key) before what concerns one line (a refused request, a bad line).
 */
const SEVERITY: readonly number[] = [EXIT.ok, EXIT.usage, EXIT.rejected, EXIT.auth, EXIT.limits, EXIT.transport, EXIT.io, EXIT.internal];

/** The most severe of two exit codes (docs/cli.md §9). */
export function moreSevere(a: number, b: number): number {
  const rank = (c: number): number => (c >= 128 ? 100 + c : SEVERITY.indexOf(c));
  return rank(b) > rank(a) ? b : a;
}

/**
 * Runs a batch.
 * @returns the exit code: the most severe of all lines (0 when all succeeded); 2 for a bad
 *   command line or an unreadable input (then no job runs); 130 / 143 / 129 after a signal.
 */
export async function runBatch(file: string, flags: BatchFlags, command: Command, io: CommandIo): Promise<number> {
  const started = performance.now();
  const reporter = createReporter(io.stderr, flags);
  return runLifecycle({ reporter, io }, async ({ signal, atEnd }) => {
    let display: ProgressDisplay | undefined;
    try {
      // The config file's play and document settings are no batch's (docs/cli.md §7, §9: defaults
      // that fit the run): a batch plays nothing and reads plain text. Given as flags, they are exit 2.
      for (const attr of ['play', ...DOCUMENT_FLAGS] as const) if (command.getOptionValueSource(attr) === 'config') delete flags[attr];
      for (const [flag, set] of [['-o/--output', flags.output], ['-f/--file', flags.file], ['--play', flags.play]] as const) {
        if (set !== undefined) throw new TtsError('usage', `${flag} is not a batch flag`, { hint: 'each line names its own "output" (and "text" or "file"); --output-dir DIR sets their folder' });
      }
      // Batch reads plain text; documents and chapters are a run's own (docs/cli.md §9, §10).
      const documentFlag = DOCUMENT_FLAGS.find((k) => flags[k] !== undefined);
      if (documentFlag !== undefined) throw new TtsError('usage', `--${documentFlag.replace(/[A-Z]/gu, (c) => `-${c.toLowerCase()}`)} is not a batch flag: tts batch reads plain text`, { hint: 'speak a document with tts stream -f FILE' });
      if (flags.lines === true && flags.outputDir === undefined) throw new TtsError('usage', '--lines needs --output-dir DIR', { hint: 'tts batch --lines FILE --output-dir DIR writes DIR/0001.wav, …' });
      const lines = await readBatchLines(file, io, flags.maxInput, signal);
      const jobs = flags.lines === true ? plainJobs(lines, flags.outputDir!, flags) : jsonJobs(lines, command, flags, flags.outputDir);
      // The config file's container, wav, raw and bitrate are defaults that fit each job (docs/cli.md §7).
      for (const job of jobs) {
        if (job.invalid === undefined) fitConfigDefaults(job.flags, (attr) => command.getOptionValueSource(attr) === 'config' && !job.own.has(attr), job.output, false);
      }
      if (jobs.length === 0) throw new TtsError('usage', `${file === '-' ? 'standard input' : file} has no jobs`, { hint: 'one JSON object per line, or with --lines one text per line' });
      // A lexicon named in the config file is beside it (docs/cli.md §7).
      for (const job of jobs) {
        if (job.invalid === undefined && command.getOptionValueSource('lexicon') === 'config' && !job.own.has('lexicon')) lexiconBesideConfig(job.flags, io.env);
      }
      // Nothing is written over an input (the config file, the lexicons and the key file too) or
      // twice, checked before the first job (docs/cli.md §9).
      const lexiconPaths = new Set(jobs.flatMap((j) => (j.invalid === undefined ? settingsFiles(j.flags, io.env).filter((f) => f.what === 'the lexicon') : [])).map((f) => f.path));
      await assertNoCollisions(jobs, file, [...settingsFiles(flags, io.env).filter((f) => f.what !== 'the lexicon'), ...[...lexiconPaths].map((path) => ({ what: 'the lexicon', path }))]);
      // Each job's lexicon (docs/cli.md §11.3), read once per file before the first job: a bad one is exit 2 with nothing done.
      const lexicons = new Map<string | boolean | undefined, MappedRewrite | undefined>();
      for (const job of jobs) {
        if (job.invalid !== undefined) continue;
        if (!lexicons.has(job.flags.lexicon)) lexicons.set(job.flags.lexicon, await lexiconFor(job.flags.lexicon, configPath(io.env)));
      }
      if (flags.outputDir !== undefined) await makeOutputFolder(flags.outputDir);

      const inline = jobs.map((j) => j.text ?? '').join('\n').slice(0, 64 * 1024);
      const target: ServiceTarget = await resolveService({ text: inline, baseUrl: flags.baseUrl, wsBaseUrl: flags.wsBaseUrl, baseUrlFrom: flags.baseUrlFrom, wsBaseUrlFrom: flags.wsBaseUrlFrom, apiKeyFile: flags.apiKeyFile, offline: flags.offline === true, env: io.env, warn: (l) => reporter.warn(l), signal });
      atEnd(() => target.close());
      // A service that sends no word timings: one aligner for every job that asks for them (src/align;
      // its thread and engine start on first use).
      const wantWords = jobs.some((j) => j.invalid === undefined && (j.flags.words === true || j.flags.wordTimings !== undefined));
      const aligner = target.embedded || !wantWords ? undefined : (await import('../align/piece-aligner.js')).createPieceAligner({ warn: (l) => reporter.warn(l) });
      if (aligner !== undefined) atEnd(() => aligner.close());
      reporter.setSecret(target.apiKey);
      if (target.embedded) reporter.notice('no service configured (TTS_BASE_URL): using the built-in offline engine');
      markCacheForced(flags, command);
      const cache = cacheFor(flags, cacheEnv(flags, io.env), (l) => reporter.warn(l));

      // No progress line where a line's subtitles or word timings are written in place to the
      // terminal stderr draws on: it would tear their lines (docs/cli.md §2 "Progress").
      const textOnTerminal = await sharesTerminal(jobs.flatMap((j) => (j.invalid === undefined ? [j.flags.subtitles, j.flags.wordTimings] : [])), io.stderr);
      if (!textOnTerminal) display = await startProgressDisplay(io, flags, `jobs 0/${jobs.length}`);
      const totals = { done: 0, failed: 0, bytes: 0, seconds: 0, requests: 0, hits: 0 };
      const show = (): void => {
        const elapsed = (performance.now() - started) / 1000;
        const finished = totals.done + totals.failed;
        const left = finished > 0 ? ` · ~${formatClock((elapsed * (jobs.length - finished)) / finished)} left` : '';
        display?.update(`jobs ${finished}/${jobs.length} (${Math.floor((finished / jobs.length) * 100)}%) · ${totals.failed} failed · ${totals.seconds.toFixed(1)} s audio · ${formatClock(elapsed)} elapsed${left}`);
      };
      const say = (line: string): void => {
        if (display !== undefined) display.log(line);
        else io.stderr.write(`${line}\n`);
      };
      const lineReporter = (job: BatchJob): Reporter => {
        const r = createReporter({ write: (t: string) => (say(t.replace(/\n$/, '').replace(/^tts: /, `tts: line ${job.line}: `)), true), isTTY: io.stderr.isTTY } as never, flags);
        r.setSecret(target.apiKey);
        return r;
      };

      let code: number = EXIT.ok;
      let next = 0;
      const worker = async (): Promise<void> => {
        while (!signal.aborted) {
          const job = jobs[next++];
          if (job === undefined) return;
          // Each job listens on a signal of its own, which follows the batch's without adding a
          // listener to it: the run and each piece in flight listen on the signal they get, so
          // --jobs 8 sharing one signal passed Node's 10 listeners (MaxListenersExceededWarning).
          const result = await runJob(job, target, cache, lineReporter(job), io, AbortSignal.any([signal]), lexicons.get(job.flags.lexicon), aligner?.hook);
          if (signal.aborted) return;
          code = moreSevere(code, result.exit_code);
          if (result.ok) totals.done++;
          else totals.failed++;
          totals.bytes += result.bytes;
          totals.seconds += result.audio_seconds;
          totals.requests += result.requests;
          totals.hits += result.cache_hits;
          if (flags.json === true) say(jsonLine(result));
          show();
        }
      };
      await Promise.all(Array.from({ length: Math.min(flags.jobs, jobs.length) }, worker));
      signal.throwIfAborted();
      display?.stop();
      display = undefined;
      await cache?.settle();
      if (io.stderr.isTTY === true && flags.quiet !== true && flags.json !== true) {
        reporter.warn(
          `batch: ${totals.done} of ${jobs.length} job(s) done${totals.failed > 0 ? `, ${totals.failed} failed` : ''} · ${formatClock(totals.seconds)} audio · ${formatClock((performance.now() - started) / 1000)} elapsed · ${totals.requests} requests, ${totals.hits} from cache`,
        );
      }
      return code;
    } finally {
      display?.stop();
    }
  });
}

/**
 * Refuses a job file that `tts stream -f` would read as a document (§10) or a dialogue script
 * (§11.2): a batch reads plain text and SSML, and reading the markup aloud is never what was meant.
 * @throws TtsError `usage` (exit 2) for `.md`, `.markdown`, `.html`, `.htm`, `.xhtml`, `.epub`, `.script.txt`.
 */
function refuseDocumentFile(file: string | undefined): void {
  const format = inputFormatOf(undefined, file);
  if (format === 'text' || format === 'ssml') return;
  const what = format === 'script' ? 'a dialogue script' : `a${format === 'epub' ? 'n' : ''} ${format} document`;
  throw new TtsError('usage', `${file} is ${what}; tts batch reads plain text and SSML`, { hint: `speak it with tts stream -f ${file} -o FILE` });
}

/**
 * One job: its text into its file, through the shared service and cache.
 * @returns its result; never throws (a failure is reported on stderr with the line number).
 */
async function runJob(
  job: BatchJob,
  target: ServiceTarget,
  cache: ReturnType<typeof cacheFor>,
  reporter: Reporter,
  io: CommandIo,
  signal: AbortSignal,
  rewrite: MappedRewrite | undefined,
  aligner: PieceAligner | undefined,
): Promise<JobResult> {
  const started = performance.now();
  const flags = job.flags;
  const stats: RunStats = { requests: 0, bytes: 0, itemIds: new Set(), firstAudioAt: undefined };
  const spec = specOf(flags);
  let exit: number = EXIT.ok;
  let error: string | undefined;
  try {
    if (job.invalid !== undefined) throw job.invalid;
    // The line's own flags (container, bit rate…), but never playback or stdout: a job writes its file.
    const plan = planOutput('stream', { ...flags, output: job.output, play: false }, false, spec);
    if (plan.file !== undefined) await assertOutputIsNotInput(plan.file.path, job.file);
    if (flags.subtitles !== undefined) await checkSubtitlesPath(flags.subtitles, plan, job.file);
    await checkWordOptions(flags, plan, job.file);
    const words = job.text !== undefined ? [job.text] : [];
    refuseDocumentFile(job.file);
    const source = await textSource({ words, file: job.file, lines: false, maxInputBytes: flags.maxInput, maxChars: flags.maxChars, stdin: io.stdin, signal });
    const settings = speakSettings(flags);
    // SSML (a text starting with <speak, a .ssml file) is read as `tts say` reads it (docs/cli.md §9, §11.1).
    const spans = await ssmlSpansOf(words, job.file === undefined ? flags : { ...flags, file: job.file }, source, settings.language, rewrite === undefined ? undefined : sharedGrowthBound(rewrite));
    await deliverSpeech({
      ...settings,
      channel: 'sse',
      ...(spans !== undefined
        ? { spans }
        : { pieces: rewrite === undefined ? piecesFor(source.pieces, flags) : rewritePieces(piecesFor(source.pieces, flags), rewrite, settings.language, flags.maxChars) }),
      plan,
      target,
      stdout: io.stdout,
      signal,
      log: { verbose: (l) => reporter.verbose(l), warn: (l) => reporter.warn(l) },
      stats,
      cache,
      aligner,
    });
  } catch (err) {
    if (!signal.aborted) exit = reportError(err, reporter);
    error = err instanceof TtsError ? err.code : 'internal';
  }
  const result: JobResult = {
    line: job.line,
    ok: error === undefined,
    output: job.output,
    bytes: stats.bytes,
    audio_seconds: Number(audioSeconds(stats.bytes, spec.format, spec.sampleRate, spec.channels).toFixed(3)),
    elapsed_ms: Math.round(performance.now() - started),
    requests: stats.requests - (stats.cacheHits ?? 0),
    cache_hits: stats.cacheHits ?? 0,
    exit_code: exit,
  };
  if (error !== undefined) result.error = error;
  return result;
}
