/**
 * Documents through the synthesis commands (docs/cli.md §10): reading a Markdown, HTML or EPUB
 * input into its spoken text and chapters, the pieces to request (split chapter by chapter, so a
 * piece never spans two), `--print-text`, `--split-chapters`, and the chapter outputs once the
 * audio is written (container metadata, `--chapters FILE.vtt`).
 *
 * What is sent to the service — and so each piece's cache key (docs/cli.md §8) — is the
 * document's spoken text alone: chapters and tags never change it.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { metadataText, webvttChapters, type AudioChapter, type AudioTags } from '../audio/containers/chapters.js';
import { writeChapterMetadata, type TaggedContainer } from '../audio/containers/chapter-files.js';
import { assertReplaceable, commitAtomicFile, discardAtomicFile, ioError, openAtomicFile } from '../audio/file-sink.js';
import { makeOutputFolder, outputTarget } from '../audio/output-target.js';
import { bytesPerFrame, type AudioSpec } from '../dsp/spec.js';
import { TtsError } from '../errors.js';
import { ChapterClock } from '../speak/chapter-clock.js';
import { assertOutputIsNotInput, assertSideOutputCanBeWritten, fileIdentity, sameFile } from '../speak/output-checks.js';
import { openTextFile, writtenInPlace, type TextFile } from '../speak/text-file.js';
import type { OutputPlan } from '../speak/output-plan.js';
import { sentencePiecesOfEach, sentencesOf } from '../text/sentences.js';
import { CollapsedText } from '../text/spans.js';
import { inputFormatOf } from '../text/documents/formats.js';
import { chaptersOf, type SpokenChapter, type SpokenDocument } from '../text/documents/model.js';
import { openText } from '../text/read.js';
import { textSource } from '../text/source.js';
import type { SpanList } from '../text/span-list.js';
import { splitText } from '../text/split.js';
import type { TextPiece } from '../text/source.js';
import type { RunMappedText } from '../engine/mapped-text.js';
import type { SynthesisFlags } from './flags.js';
import { sharedGrowthBound, type MappedRewrite } from '../text/lexicon.js';
import type { CommandIo } from './report.js';
import { stdoutText } from './escape.js';
import { scriptSpansOf } from './script-input.js';
import { ssmlSpansOf } from './ssml-input.js';
import { languageForVoice } from '../protocol/voices.js';
import type { Language } from '../protocol/types.js';

/** A document ready to be spoken. */
export interface DocumentSource {
  doc: SpokenDocument;
  /** The chapters to speak (after --chapter-range), in order. */
  chapters: SpokenChapter[];
  /** Index (0-based) of the first of {@link chapters} in the whole document's chapters. */
  firstIndex: number;
  /**
   * The pieces of at most --max-chars, chapter by chapter, a `"\n"` piece between two chapters;
   * the pieces of a chapter the lexicon changed carry its map (text/source.ts WrittenPiece).
   */
  pieces: AsyncIterable<TextPiece>;
  /** The start of the spoken text (for the language check and the engine's warm-up). */
  text: string;
  /** Times the chapters as their pieces end. */
  clock: ChapterClock;
}

/**
 * Reads the input as a document when `--input-format` or the `-f` extension says it is one.
 * @param lexicon the run's lexicon and language: each chapter's text is rewritten, and its pieces
 *   carry the map to the text as written (docs/cli.md §12.1) unless `maps` is false (`--print-text`:
 *   the same text, no map built).
 * @returns undefined for plain text (read as a stream by text/read.ts, as before).
 * @throws TtsError `usage` (exit 2): --lines with a document, an unreadable or hostile document,
 *   nothing to speak, a --chapter-range past the last chapter.
 */
export async function documentSource(
  words: string[],
  flags: SynthesisFlags,
  io: CommandIo,
  signal: AbortSignal,
  verbose: (line: string) => void,
  lexicon?: { apply: MappedRewrite; language: Language; maps?: boolean },
): Promise<DocumentSource | undefined> {
  const format = inputFormatOf(flags.inputFormat, words.length > 0 ? undefined : flags.file);
  // SSML and dialogue scripts are read by the synthesis command itself (text/ssml.ts, text/script.ts), as speech spans.
  if (format === 'text' || format === 'ssml' || format === 'script') {
    // Chapter flags on plain text would do nothing: say so rather than ignore them. SSML takes
    // --chapters: its marks start the chapters (docs/cli.md §11.1).
    const given = ([['--chapters', format === 'ssml' ? undefined : flags.chapters], ['--chapter-level', flags.chapterLevel], ['--chapter-range', flags.chapterRange], ['--code-phrase', flags.codePhrase]] as const).find(([, v]) => v !== undefined);
    if (given !== undefined) throw new TtsError('usage', `${given[0]} needs a document (Markdown, HTML or EPUB); the input is ${format === 'text' ? 'plain text' : format === 'ssml' ? 'SSML' : 'a dialogue script'}`, { hint: 'give -f FILE.md, .html or .epub, or --input-format markdown|html|epub' });
    return undefined;
  }
  if (flags.lines === true) throw new TtsError('usage', `--lines reads plain text; it cannot read ${format}`, { hint: 'drop --lines, or --input-format' });
  const path = words.length > 0 ? 'the words' : flags.file === undefined || flags.file === '-' ? 'standard input' : flags.file;
  let text: string | undefined;
  if (words.length > 0) text = words.join(' ');
  else if (path === 'standard input') {
    const parts: string[] = [];
    for await (const block of await openText({ words: [], file: undefined, stdin: io.stdin, maxInputBytes: flags.maxInput, signal })) parts.push(block);
    text = parts.join('');
  }
  // The readers (and their parsers) are loaded only for a document.
  const { readDocument } = await import('../text/documents/index.js');
  const doc = await readDocument(format, path, text, { chapterLevel: flags.chapterLevel, codePhrase: flags.codePhrase ?? '', maxInputBytes: flags.maxInput });
  if (doc.skippedCode > 0) verbose(`${path}: ${doc.skippedCode} code block(s) not read${flags.codePhrase ? ` (said "${flags.codePhrase}")` : ''}`);
  const all = chaptersOf(doc);
  if (all.length === 0) throw new TtsError('usage', `${path} has no text to speak`, { hint: 'check the file; code blocks, scripts and navigation are not read' });
  const asked = flags.chapterRange;
  // Quoted as typed: a number past 2^53 is rounded in `first`.
  if (asked !== undefined && asked.first > all.length) throw new TtsError('usage', `--chapter-range ${asked.given} starts past the last chapter: ${path} has ${all.length}`, { hint: 'see them with --print-text --verbose' });
  const range = asked ?? { first: 1, last: all.length };
  // The lexicon rewrites each chapter's text once, before it is split and counted (docs/cli.md §11.3).
  // Its map goes with the chapter's pieces: their words are told in the text as written (§12.1).
  const written = new Map<SpokenChapter, RunMappedText>();
  const chapters = all.slice(range.first - 1, range.last).map((c) => {
    if (lexicon === undefined) return c;
    // Where no map is read (`--print-text`): the text alone, the same text (text/lexicon.ts `lexiconReader`).
    if (lexicon.maps === false) return { ...c, text: lexicon.apply.plain(c.text, lexicon.language) };
    const rewritten = lexicon.apply(c.text, lexicon.language);
    const chapter = { ...c, text: rewritten.text };
    if (rewritten.changed) written.set(chapter, rewritten);
    return chapter;
  });
  verbose(`${path}: ${all.length} chapter(s)${flags.chapterRange ? `, speaking ${range.first}–${range.first + chapters.length - 1}` : ''}`);
  const maxChars = flags.maxChars;
  return {
    doc,
    chapters,
    firstIndex: range.first - 1,
    text: chapters[0]!.text.slice(0, 4096),
    clock: new ChapterClock(
      chapters.map((c) => c.title),
      chapters.map((c) => c.text),
    ),
    pieces: (async function* () {
      for (const [i, chapter] of chapters.entries()) {
        // A line break between chapters, never sent (the pipeline sends no piece without
        // anything to say), so that the next chapter's first sentence starts a sentence: its
        // --pause, its own cue and player line. Chapter texts are trimmed, and "there." then
        // "Second part" joined with nothing between are one sentence by UAX #29.
        if (i > 0) yield '\n';
        const map = written.get(chapter);
        for (const text of splitText(chapter.text, maxChars)) yield map === undefined ? text : { text, written: map };
      }
    })(),
  };
}

/**
 * `--print-text` / `--dry-run`: the text as it will be spoken, one sentence per line, on stdout
 * (the one case where stdout gets text: asked for by name). Nothing is synthesized.
 * @returns exit code 0.
 * @throws TtsError `usage` as {@link documentSource}, or for an unreadable or empty text; the
 *   reason of `signal` (a stop signal, TtsError `interrupted`) once it is aborted while standard
 *   output takes nothing (a pipe nobody reads).
 */
export async function printSpokenText(...args: Parameters<typeof documentSource>): Promise<number> {
  const [words, flags, io, signal, verbose, given] = args;
  // The input is read whole: its parts share one growth bound (text/lexicon.ts). Its text is
  // printed, never timed: the lexicon's maps to the text as written (docs/cli.md §12.1) are not built.
  const lexicon = given === undefined ? undefined : { ...given, apply: sharedGrowthBound(given.apply), maps: false };
  const source = await documentSource(words, flags, io, signal, verbose, lexicon);
  const out = new PrintedText(io.stdout, signal);
  if (source !== undefined) {
    for (const [i, c] of source.chapters.entries()) {
      // The chapter's name on stderr after the text before it on stdout.
      await out.flush();
      verbose(`chapter ${source.firstIndex + i + 1}: ${c.title}`);
      for (const block of c.text.split('\n\n')) {
        for (const s of sentencesOf(block)) {
          if (s.trim() !== '') out.add(`${s.replace(/\s+/gu, ' ').trim()}\n`);
          await out.ready();
          if (out.gone) return 0;
        }
      }
    }
    await out.flush();
    return 0;
  }
  // Read as a run reads it (text/source.ts): SSML and scripts as the text comes, never one string.
  const text = await textSource({ words, file: flags.file, lines: false, maxInputBytes: flags.maxInput, maxChars: flags.maxChars, stdin: io.stdin, signal });
  // SSML (docs/cli.md §11.1) and dialogue scripts (§11.2): the spans' text as it will be sent; the lexicon (§11.3) in all.
  const language = lexicon?.language ?? ((flags.language ?? languageForVoice(flags.voice)) as Language);
  const spans = (await scriptSpansOf(words, flags, text, lexicon?.apply, false)) ?? (await ssmlSpansOf(words, flags, text, language, lexicon?.apply, false));
  const texts = spans !== undefined ? spanTexts(spans) : [await plainText(text.whole!, lexicon === undefined ? undefined : (t) => lexicon.apply.plain(t, language))];
  // A sentence is written as it comes: one of 16 MB (a text with no sentence end) in windows,
  // never copied whole.
  const sentence = new CollapsedText((piece) => out.add(piece));
  for (const { text: piece, ends } of sentencePiecesOfEach(texts)) {
    sentence.add(piece);
    if (ends && sentence.started) out.add('\n');
    if (ends) sentence.end();
    await out.ready();
    // The reader went away (`| head -1`): the rest would be written to nobody.
    if (out.gone) return 0;
  }
  await out.flush();
  return 0;
}

/**
 * `--print-text`'s output to standard output: its lines gathered and written 64 KiB at a time
 * (with control characters escaped on a terminal, cli/escape.ts `stdoutText`), waiting while the
 * stream's buffer is full. A pipe is written asynchronously: a line at a time, a million lines
 * written at once were all held in memory until the reader took them (a 32 MiB document printed
 * into a pipe: 600 MB), and each write's request object lived until the pipe took it. Once the
 * stream failed or closed (the reader went away) it no longer waits, and the printing stops
 * ({@link gone}). A stop signal ends the wait: the run ends (exit 130, 143,
 * 129; docs/cli.md §3) and what the stream did not take is dropped. A stream that takes every
 * write at once — a regular file (`> out.txt`: Node writes it synchronously), a pipe read as fast
 * as it is written — never makes the printing wait, so after each block written it still lets the
 * event loop run once ({@link ready}): a stop signal is seen there, not only once the whole
 * text was printed (SIGTERM during 40 MiB printed into a file: the run went on to its end, exit 0).
 */
class PrintedText {
  #text = '';
  #gone = false;
  /** The wait for the stream's buffer to empty, after a write it did not take whole. */
  #waiting: Promise<void> | undefined;
  /** Whether a block was written since the event loop last ran ({@link ready}). */
  #wrote = false;

  /**
   * @param signal the run's: once it is aborted, {@link ready} and {@link flush} throw its reason
   *   instead of waiting (a reader that takes nothing would hold the run forever).
   */
  constructor(
    private readonly stdout: NodeJS.WritableStream & { isTTY?: boolean | undefined },
    private readonly signal: AbortSignal,
  ) {}

  /**
   * Whether the stream failed or closed (the reader went away: EPIPE), as a write found it:
   * nothing written from then on is read, so the printing stops.
   */
  get gone(): boolean {
    return this.#gone || (this.stdout as { destroyed?: boolean }).destroyed === true;
  }

  /** Adds text (whole lines, or part of one: a long line is written in parts), written once enough is gathered. */
  add(text: string): void {
    this.#text += text;
    if (this.#text.length >= PRINT_BLOCK_CHARS) this.#write();
  }

  /**
   * @returns the wait for the stream to take what was written (its buffer full: a pipe read
   *   slowly); else, once a block was written, one turn of the event loop (setImmediate), so that
   *   a stop signal is handled; else undefined (no promise for each of a million lines).
   * @throws the run's signal's reason, at once or when the wait ends, once it is aborted.
   */
  ready(): Promise<void> | undefined {
    this.signal.throwIfAborted();
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting === undefined && !this.#wrote) return undefined;
    this.#wrote = false;
    return (waiting ?? new Promise<void>((resolve) => setImmediate(resolve))).then(() => this.signal.throwIfAborted());
  }

  /** Writes what was added, and waits for the stream to take it. */
  async flush(): Promise<void> {
    this.#write();
    await this.ready();
  }

  #write(): void {
    const text = this.#text;
    this.#text = '';
    if (text === '') return;
    this.#wrote = true;
    if (this.stdout.write(stdoutText(text, this.stdout)) || this.#gone || this.#waiting !== undefined) return;
    this.#waiting = new Promise<void>((resolve) => {
      const done = (): void => {
        this.stdout.removeListener('drain', done);
        this.stdout.removeListener('error', failed);
        this.stdout.removeListener('close', failed);
        this.signal.removeEventListener('abort', done);
        resolve();
      };
      const failed = (): void => {
        this.#gone = true;
        done();
      };
      this.stdout.on('drain', done);
      this.stdout.on('error', failed);
      this.stdout.on('close', failed);
      this.signal.addEventListener('abort', done);
    });
  }
}

/** Code units {@link PrintedText} gathers before it writes them. */
const PRINT_BLOCK_CHARS = 64 * 1024;

/** Each span's text, one at a time: a long one in blocks. */
function* spanTexts(spans: SpanList): Generator<string | Iterable<string>, void, undefined> {
  for (const entry of spans.entries(false)) yield entry.storedBytes <= 64 * 1024 ? spans.textOf(entry) : spans.textBlocks(entry);
}

/** Plain text read whole (`--print-text` prints its sentences), rewritten by the lexicon when there is one. */
async function plainText(blocks: AsyncIterable<string>, rewrite: ((text: string) => string) | undefined): Promise<string> {
  const parts: string[] = [];
  for await (const block of blocks) parts.push(block);
  const text = parts.join('');
  return rewrite === undefined ? text : rewrite(text);
}

/** The document's tags for a whole-document file (title, author, album = title). */
export function documentTags(doc: SpokenDocument): AudioTags {
  return { title: doc.title, artist: doc.author, album: doc.title };
}

/**
 * After the audio was written: the chapters with their times, put into the output file (MP3,
 * FLAC, Ogg Opus, WAV) and into `--chapters FILE.vtt`.
 * @param inPlace `--chapters` when it is written in place, opened before the run
 *   ({@link openChaptersInPlace}); undefined: it is a file, written atomically now.
 * @returns the chapters heard (for `--json`).
 * @throws TtsError `io_error` (exit 7) when a file cannot be written; the audio file is then as
 *   it was written, without chapters.
 */
export async function finishDocument(source: DocumentSource, plan: OutputPlan, spec: AudioSpec, audioBytes: number, flags: SynthesisFlags, inPlace?: TextFile): Promise<AudioChapter[]> {
  const seconds = audioBytes / bytesPerFrame(spec) / spec.sampleRate;
  const chapters = source.clock.chapters(seconds);
  await writeChapters(chapters, documentTags(source.doc), plan, spec, flags, inPlace);
  return chapters;
}

/**
 * Opens `--chapters` when it is a FIFO, a socket or a device, to be written in place
 * (speak/text-file.ts) once the audio is complete: opened now, before the first request, so that
 * a FIFO's reader is waited for (interruptibly) before the synthesis, not after it. The caller
 * aborts it when the run fails (the reader then gets nothing).
 * @param options `signal` stops the wait for a FIFO's reader (Ctrl-C; `q` in the player); `verbose`
 *   says it waits; `waiting` is called once when that wait begins.
 * @returns the open output, or undefined without `--chapters` or when it is a file.
 * @throws as speak/text-file.ts `openTextFile`.
 */
export async function openChaptersInPlace(
  flags: Pick<SynthesisFlags, 'chapters'>,
  options: { signal: AbortSignal; verbose: (line: string) => void; waiting?: (() => void) | undefined },
): Promise<TextFile | undefined> {
  if (flags.chapters === undefined || !(await writtenInPlace(flags.chapters))) return undefined;
  return openTextFile(flags.chapters, 'the chapters', options);
}

/**
 * SSML with `--chapters FILE.vtt` (docs/cli.md §11.1): each mark starts a chapter named by it
 * (audio before the first mark — all of it, without marks — is a chapter "Opening"; of marks at
 * one time the last names it),
 * written like a document's (into the file's metadata and FILE.vtt) once the audio is complete.
 * @param marks the run's marks in order, times in seconds.
 * @param inPlace as {@link finishDocument}'s.
 * @returns the chapters (for `--json`); undefined without `--chapters`.
 * @throws TtsError `io_error` (exit 7) as {@link finishDocument}.
 */
export async function finishMarkChapters(marks: readonly { name: string; time: number }[], plan: OutputPlan, spec: AudioSpec, audioBytes: number, flags: SynthesisFlags, inPlace?: TextFile): Promise<AudioChapter[] | undefined> {
  if (flags.chapters === undefined) return undefined;
  const seconds = audioBytes / bytesPerFrame(spec) / spec.sampleRate;
  const starts: { title: string; start: number }[] = marks.length === 0 || marks[0]!.time > 0 ? [{ title: 'Opening', start: 0 }] : [];
  for (const mark of marks) {
    if (starts.length > 0 && starts[starts.length - 1]!.start === mark.time) starts.pop();
    // One line, as a document's titles: a name's line breaks would break the file's chapter metadata.
    starts.push({ title: mark.name.replace(/\s+/gu, ' ').trim(), start: mark.time });
  }
  const chapters = starts.map((c, i) => ({ ...c, end: starts[i + 1]?.start ?? seconds })).filter((c) => c.end > c.start);
  await writeChapters(chapters, {}, plan, spec, flags, inPlace);
  return chapters;
}

/**
 * The chapters into the audio file's metadata (not raw) and into `--chapters FILE.vtt`: the open
 * `inPlace` output when it is a FIFO, socket or device, else a file written atomically.
 */
async function writeChapters(chapters: AudioChapter[], tags: AudioTags, plan: OutputPlan, spec: AudioSpec, flags: SynthesisFlags, inPlace: TextFile | undefined): Promise<void> {
  const file = plan.file;
  if (file !== undefined && file.container !== 'raw' && (await stat(file.path).catch(() => undefined))?.isFile() === true) {
    await writeChapterMetadata(file.path, file.container as TaggedContainer, tags, chapters, spec.sampleRate);
  }
  if (inPlace !== undefined) {
    await inPlace.write(webvttChapters(chapters));
    await inPlace.finish();
  } else if (flags.chapters !== undefined) await writeTextAtomically(flags.chapters, webvttChapters(chapters));
}

/**
 * Refuses a `--chapters` path that is not `.vtt` (a FIFO, socket or device written in place may
 * have any name) or is the audio output, the subtitles, the word timings or the input
 * (docs/cli.md §10) by any name (a link to it too: the atomic writer follows links; one pipe by
 * any name: output-checks.ts `sameFile`), or that cannot be written (a disk, a socket no
 * descriptor leads to: output-checks.ts `assertSideOutputCanBeWritten`), before anything runs;
 * likewise a file there this user may not write (audio/file-sink.ts `assertReplaceable`), which
 * would otherwise be found only once the audio is complete.
 * @throws TtsError `usage` (exit 2); `io_error` (exit 7) for a file that cannot be replaced.
 */
export async function checkChapterPaths(flags: Pick<SynthesisFlags, 'chapters' | 'output' | 'subtitles' | 'wordTimings' | 'file'>): Promise<void> {
  if (flags.chapters === undefined) return;
  if (!/\.vtt$/iu.test(flags.chapters) && !(await writtenInPlace(flags.chapters))) throw new TtsError('usage', `--chapters ${flags.chapters}: the chapters track is WebVTT; give a name ending in .vtt`);
  for (const [other, what] of [
    [flags.output, 'the audio output (-o)'],
    [flags.subtitles, 'the --subtitles file'],
    [flags.wordTimings, 'the --word-timings file'],
    [flags.file, 'the input (-f)'],
  ] as const) {
    if (other !== undefined && other !== '-' && (await sameFile(other, flags.chapters))) throw new TtsError('usage', `--chapters ${flags.chapters} is ${what}`, { hint: 'give the chapters a name of their own, e.g. book.chapters.vtt' });
  }
  await assertSideOutputCanBeWritten(flags.chapters, '--chapters');
  // Written once the audio is complete: a file that cannot be replaced is said now, not after the synthesis.
  if (!(await writtenInPlace(flags.chapters))) await assertReplaceable(flags.chapters, await outputTarget(flags.chapters));
}

/**
 * Writes a small text file atomically: a temporary file beside it renamed over it when whole
 * (docs/cli.md §2; the one atomic writer of audio/file-sink.ts).
 * @throws TtsError `io_error` (exit 7) naming `path`; nothing is left behind.
 */
async function writeTextAtomically(path: string, text: string): Promise<void> {
  const file = await openAtomicFile(path);
  try {
    await file.fh.writeFile(text, 'utf8');
    await commitAtomicFile(file);
  } catch (cause) {
    await discardAtomicFile(file);
    throw ioError(cause, path);
  }
}

/**
 * A chapter's name made safe as a file name (docs/cli.md §10 `--split-chapters`): the name as its
 * tags carry it (audio/containers/chapters.ts `metadataText`: no C0 or C1 control characters or
 * bidirectional controls, which would reorder a listing), with each run of `/`, `\:*?"<>|` made a
 * space, at most 80 characters (code points, so a surrogate pair is never cut) and short enough
 * that the whole name is at most {@link NAME_MAX_BYTES} bytes of UTF-8 (80 characters of four
 * bytes, `𠮷`, are 320), cut at a whole code point and trimmed again.
 */
export function chapterFileName(index: number, count: number, title: string, extension: string): string {
  const digits = Math.max(2, String(count).length);
  const number = String(index).padStart(digits, '0');
  // The name the chapter's tags and the chapters track carry (controls left out), then no path characters.
  const cleaned = metadataText(title).replace(/[/\\:*?"<>|]+/gu, ' ').replace(/\s+/gu, ' ').trim().replace(/^\.+/u, '');
  // What the number, the space before the title and the extension leave of the name's bytes.
  let room = NAME_MAX_BYTES - Buffer.byteLength(`${number} .${extension}`);
  const kept: string[] = [];
  for (const character of Array.from(cleaned).slice(0, 80)) {
    room -= Buffer.byteLength(character);
    if (room < 0) break;
    kept.push(character);
  }
  const safe = kept.join('').trim();
  return `${number}${safe === '' ? '' : ` ${safe}`}.${extension}`;
}

/**
 * The most bytes of one file name: NAME_MAX of Linux's file systems (ext4, btrfs, xfs, tmpfs;
 * limits.h), where a longer name is ENAMETOOLONG.
 */
const NAME_MAX_BYTES = 255;

/**
 * `--split-chapters DIR`: one file per chapter, `DIR/01 Title.mp3` …, each a run of its own
 * (written atomically; a run again after Ctrl-C takes the pieces already made from the cache),
 * tagged with the chapter's name as title, the document's title as album, its author as artist
 * and the chapter's number as track. A chapter's file there that this user may not write
 * (audio/file-sink.ts `assertReplaceable`) is refused before the first chapter is requested.
 * @param signal stops reading the document (Ctrl-C); each chapter's run has its own signals.
 * @param run one synthesis run of `text` into `output` (runSynthesisCommand); returns its exit code.
 * @param check refuses the flags of a chapter's run into `output` as that run would, before `DIR`
 *   is made (throws TtsError `usage`).
 * @returns the first non-zero exit code, else 0.
 * @throws TtsError `usage` (exit 2) for flags or names refused; `io_error` (exit 7) for a file
 *   that cannot be replaced or a folder that cannot be made.
 */
export async function splitChapters(
  words: string[],
  flags: SynthesisFlags,
  io: CommandIo,
  signal: AbortSignal,
  run: (text: string, output: string, flags: SynthesisFlags) => Promise<number>,
  check: (output: string, flags: SynthesisFlags) => Promise<void>,
  warn: (line: string) => void,
): Promise<number> {
  const dir = flags.splitChapters!;
  const source = await documentSource(words, flags, io, signal, (l) => (flags.verbose === true ? warn(l) : undefined));
  if (source === undefined) throw new TtsError('usage', '--split-chapters needs a document (Markdown, HTML or EPUB)', { hint: 'give -f FILE.md, .html or .epub, or --input-format' });
  if (flags.output !== undefined) throw new TtsError('usage', '--split-chapters writes its own files; drop -o');
  // One file for the whole run: each chapter's run would write it over the last one's.
  for (const [flag, set] of [['--subtitles', flags.subtitles], ['--word-timings', flags.wordTimings], ['--chapters', flags.chapters]] as const) {
    if (set !== undefined) throw new TtsError('usage', `${flag} names one file, and --split-chapters makes a run per chapter: each would write it over the last`, { hint: 'drop it, or make one file of the document with -o FILE' });
  }
  const container = flags.container ?? (flags.wav === true ? 'wav' : flags.raw === true ? 'raw' : 'mp3');
  const extension = container === 'opus' ? 'ogg' : container;
  const total = source.firstIndex + source.chapters.length;
  const outputs = source.chapters.map((chapter, i) => join(dir, chapterFileName(source.firstIndex + i + 1, total, chapter.title, extension)));
  // No chapter's file is the document itself (docs/cli.md §1: `-o` naming the input), checked before any is written.
  for (const output of outputs) await assertOutputIsNotInput(output, words.length > 0 ? undefined : (flags.file ?? '-'), '--split-chapters');
  // Nor is it another chapter's (a link in DIR named as one chapter, to another's name): the later would replace it.
  const written = new Map<string, string>();
  const folders = new Map<string, Promise<string>>();
  for (const output of outputs) {
    const id = await fileIdentity(output, folders);
    const earlier = id === undefined ? undefined : written.get(id);
    if (earlier !== undefined) throw new TtsError('usage', `--split-chapters ${output} is ${earlier}: one chapter's file would replace the other's`, { hint: 'remove the link there, or write to another folder' });
    if (id !== undefined) written.set(id, output);
  }
  // Nor a file there that cannot be replaced (read-only): said before the first chapter is requested, not at its turn.
  for (const output of outputs) await assertReplaceable(output, await outputTarget(output, folders));
  const { splitChapters: _s, chapters: _c, chapterRange: _r, inputFormat: _f, file: _file, play: _p, ...rest } = flags;
  const chapterFlags: SynthesisFlags = { ...rest, container, inputFormat: 'text' };
  // Flags every chapter's run would refuse are refused before the folder is made.
  if (outputs.length > 0) await check(outputs[0]!, chapterFlags);
  await makeOutputFolder(dir);
  for (const [i, chapter] of source.chapters.entries()) {
    const number = source.firstIndex + i + 1;
    const output = outputs[i]!;
    const code = await run(chapter.text, output, chapterFlags);
    if (code !== 0) return code;
    if (container !== 'raw') {
      await writeChapterMetadata(output, container, { title: chapter.title, artist: source.doc.author, album: source.doc.title, track: number }, [], flags.sampleRate);
    }
  }
  return 0;
}
