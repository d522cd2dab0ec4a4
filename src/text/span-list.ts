/**
 * Speech spans (text/spans.ts) held compactly: what an input read whole (SSML, a dialogue script;
 * docs/cli.md §11) becomes before anything is requested, kept as bytes rather than one object
 * per span. An SSML document of tiny elements (`<s>w</s>` is 8 bytes) made one span object, a
 * text string and an array slot of some 90 bytes each, and the document's text was copied
 * several times over: a 48 MB document peaked at 587 MB. Here a span costs its text as UTF-8,
 * a few bytes of record, its mark names, and one settings record per element that changes
 * them; what the list holds is at most about the size of the input.
 *
 * The spans are written in order (text first, as it is read, then the span's record when it
 * ends) and read back in order, each as a {@link SpeechSpan} made when it is reached, or — for a
 * reader that streams, such as text/span-pieces.ts — as its settings and its text in blocks, so
 * that a span of 60 MB is never one string.
 */
import { StringDecoder } from 'node:string_decoder';
import { LANGUAGES, type Language } from '../protocol/types.js';
import type { RunMappedText } from '../engine/mapped-text.js';
import type { SpanSettings, SpeechSpan } from './spans.js';

/** Size of each chunk of a {@link ByteLog}, in bytes (a power of two). */
const CHUNK_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/**
 * Bytes appended in chunks of {@link CHUNK_BYTES}: growing never copies what was written (a
 * buffer that doubles holds the old and the new copy at once), and every byte has an offset from
 * the start, read back at random.
 */
export class ByteLog {
  readonly #chunks: Buffer[] = [];
  /** Bytes written to the last chunk. */
  #used = CHUNK_BYTES;
  #length = 0;

  /** Bytes written so far. */
  get length(): number {
    return this.#length;
  }

  /** The last chunk, with at least one byte of room (a new one when it is full). */
  #room(): Buffer {
    if (this.#used === CHUNK_BYTES) {
      this.#chunks.push(Buffer.allocUnsafe(CHUNK_BYTES));
      this.#used = 0;
    }
    return this.#chunks[this.#chunks.length - 1]!;
  }

  /** Appends one byte (0–255). */
  byte(value: number): void {
    this.#room()[this.#used++] = value;
    this.#length++;
  }

  /**
   * Appends an unsigned integer (0 … 2⁵³ − 1) as unsigned LEB128 (WebAssembly spec §5.2.2, as
   * engine/wasm-sections.ts `uleb128` writes it), straight into the log: one is written for
   * every span, so no array is made for it.
   */
  varint(value: number): void {
    while (value >= 0x80) {
      this.byte((value % 0x80) | 0x80);
      value = Math.floor(value / 0x80);
    }
    this.byte(value);
  }

  /** Appends a number as 8 bytes (IEEE 754 double, little-endian), any value (−Infinity too). */
  float64(value: number): void {
    const bytes = Buffer.allocUnsafe(8);
    bytes.writeDoubleLE(value);
    for (const b of bytes) this.byte(b);
  }

  /**
   * Appends `text` as UTF-8 (WHATWG Encoding's UTF-8 encode, through TextEncoder.encodeInto).
   * @param text well-formed UTF-16 (a lone surrogate would come back as U+FFFD).
   * @returns the bytes written.
   */
  text(text: string): number {
    let written = 0;
    let rest = text;
    while (rest.length > 0) {
      const chunk = this.#room();
      const done = encoder.encodeInto(rest, chunk.subarray(this.#used));
      this.#used += done.written;
      this.#length += done.written;
      written += done.written;
      if (done.read === rest.length) break;
      rest = rest.slice(done.read);
      if (this.#used < CHUNK_BYTES) {
        // The next character did not fit whole: its bytes go on in the next chunk, so that
        // offsets stay contiguous.
        const units = rest.codePointAt(0)! > 0xffff ? 2 : 1;
        const bytes = encoder.encode(rest.slice(0, units));
        for (const b of bytes) this.byte(b);
        written += bytes.length;
        rest = rest.slice(units);
      }
    }
    return written;
  }

  /** The byte at `offset` (< {@link length}). */
  at(offset: number): number {
    return this.#chunks[Math.floor(offset / CHUNK_BYTES)]![offset % CHUNK_BYTES]!;
  }

  /** Sets the byte at `offset` (< {@link length}) to `value` (0–255). */
  setAt(offset: number, value: number): void {
    this.#chunks[Math.floor(offset / CHUNK_BYTES)]![offset % CHUNK_BYTES] = value;
  }

  /** The offset of the first `value` (0–255) at `from` or after, before `to`; -1 when there is none. */
  indexOf(value: number, from: number, to: number): number {
    let at = from;
    for (const slice of this.#slices(from, to - from)) {
      const found = slice.indexOf(value);
      if (found !== -1) return at + found;
      at += slice.length;
    }
    return -1;
  }

  /** A copy of the `length` bytes at `offset`. */
  copy(offset: number, length: number): Buffer {
    return Buffer.concat([...this.#slices(offset, length)], length);
  }

  /** A reader from `offset` on. */
  reader(offset = 0): LogReader {
    return new LogReader(this, offset);
  }

  /** The `length` bytes at `offset`, decoded as UTF-8, as one string. */
  decode(offset: number, length: number): string {
    if (length === 0) return '';
    const first = Math.floor(offset / CHUNK_BYTES);
    const at = offset % CHUNK_BYTES;
    if (at + length <= CHUNK_BYTES) return this.#chunks[first]!.toString('utf8', at, at + length);
    return Buffer.concat([...this.#slices(offset, length)], length).toString('utf8');
  }

  /**
   * The `length` bytes at `offset`, decoded as UTF-8, in blocks of at most {@link CHUNK_BYTES}
   * (a character cut by a chunk's end goes with the next block).
   */
  *blocks(offset: number, length: number): Generator<string, void, undefined> {
    const decoder = new StringDecoder('utf8');
    for (const slice of this.#slices(offset, length)) {
      const text = decoder.write(slice);
      if (text !== '') yield text;
    }
    const last = decoder.end();
    if (last !== '') yield last;
  }

  /** The chunks' parts that hold the `length` bytes at `offset`, in order (views, not copies). */
  *#slices(offset: number, length: number): Generator<Buffer, void, undefined> {
    let chunk = Math.floor(offset / CHUNK_BYTES);
    let at = offset % CHUNK_BYTES;
    for (let left = length; left > 0; chunk++, at = 0) {
      const end = Math.min(CHUNK_BYTES, at + left);
      yield this.#chunks[chunk]!.subarray(at, end);
      left -= end - at;
    }
  }
}

/** Reads a {@link ByteLog} from an offset on: what its writers wrote, in the same order. */
export class LogReader {
  constructor(
    private readonly log: ByteLog,
    /** The offset of the next byte to read. */
    public offset: number,
  ) {}

  byte(): number {
    return this.log.at(this.offset++);
  }

  /** An unsigned LEB128 integer, as {@link ByteLog.varint} writes it. */
  varint(): number {
    let value = 0;
    for (let scale = 1; ; scale *= 0x80) {
      const b = this.byte();
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
    }
  }

  /** A number, as {@link ByteLog.float64} writes it. */
  float64(): number {
    const bytes = Buffer.allocUnsafe(8);
    for (let i = 0; i < 8; i++) bytes[i] = this.byte();
    return bytes.readDoubleLE();
  }

  /** A string written as its UTF-8 length ({@link varint}) and bytes. */
  string(): string {
    const length = this.varint();
    const text = this.log.decode(this.offset, length);
    this.offset += length;
    return text;
  }

  /** Reads past a string as {@link string} reads it, without making it. */
  skipString(): void {
    const length = this.varint();
    this.offset += length;
  }
}

/** The settings of a span, as {@link SpanList.settings} stores them: names by {@link SpanList.name}. */
export interface SpanSettingsRecord {
  /** A voice id, from {@link SpanList.name}. */
  voice?: number | undefined;
  language?: Language | undefined;
  rate?: number | undefined;
  gainDb?: number | undefined;
  /** A speaker's name, from {@link SpanList.name}. */
  speaker?: number | undefined;
}

/** What a span has beyond its text and settings, as {@link SpanList.endSpan} takes it. */
export interface SpanEnd {
  /** Whether it starts a sentence; undefined leaves the span without the field. */
  newSentence?: boolean | undefined;
  /** Its settings, from {@link SpanList.settings}; undefined = the run's own. */
  settings?: number | undefined;
  /** Silence before it, in milliseconds. */
  breakBeforeMs?: number | undefined;
  /**
   * Its text mapped to the text as written, when the lexicon changed it (SpeechSpan `written`):
   * kept as it is, beside the bytes (text/lexicon.ts `mapWithin` keeps such maps few and small).
   */
  written?: RunMappedText | undefined;
}

/** One span as {@link SpanList.entries} gives it: its settings, and where its text is. */
export interface SpanEntry {
  /** The span without its text (a new object each time; shared by nothing else). */
  span: SpanSettings;
  /** Offset of its text in the list's text, in bytes. */
  textStart: number;
  /**
   * Bytes its text is stored in: its UTF-8, and a few bytes for each text kept to be made when
   * read ({@link SpanList.appendMade}), a say-as's content; 0 for a span without text.
   */
  storedBytes: number;
}

// A span's record: its text's length, then a flags number saying which fields follow.
const NEW_SENTENCE_SET = 1;
const NEW_SENTENCE_TRUE = 2;
const HAS_SETTINGS = 4;
const HAS_BREAK = 8;
const BREAK_FLOAT = 16;
const HAS_MARKS = 32;
// A settings record: a flags number, then the fields it names.
const SET_VOICE = 1;
const SET_LANGUAGE = 2;
const SET_RATE = 4;
const SET_GAIN = 8;
const SET_SPEAKER = 16;

/** Starts a text kept to be made when read ({@link SpanList.appendMade}): a byte UTF-8 never has. */
const MADE = 0xff;

/**
 * Speech spans, written in order and read back in order. The writer appends the open span's
 * text ({@link appendText}) and marks ({@link addMark}) as they are read, then ends it with its
 * settings ({@link endSpan}); names (voice ids, speakers) and settings records are stored once
 * and referred to by number. A text that is longer than what it is made from (a say-as: `W` is
 * ダブリュー, 18 bytes for 1) can be kept as what it is made from, and made again when read
 * ({@link appendMade}).
 */
export class SpanList implements Iterable<SpeechSpan> {
  /**
   * @param make makes a text kept by {@link appendMade} from its record (the same text each time).
   */
  constructor(private readonly make: (record: Buffer) => string = () => '') {}

  readonly #text = new ByteLog();
  /** UTF-8 bytes of the spans' text as read, texts made when read included. */
  #textBytes = 0;
  /** The spans' records. */
  readonly #records = new ByteLog();
  /** Mark names, in order: read along with the records. */
  readonly #marks = new ByteLog();
  /** Names (varint length + UTF-8) and settings records, referred to by offset. */
  readonly #names = new ByteLog();
  #count = 0;
  /** The maps of the spans that have one ({@link SpanEnd.written}), by span number (0-based). */
  readonly #written = new Map<number, RunMappedText>();
  /** Where the open span's text starts. */
  #openStart = 0;
  #openMarks = 0;

  /** Spans ended so far. */
  get length(): number {
    return this.#count;
  }

  /** UTF-8 bytes of all the spans' text as read (the open span's too; texts made when read, as made). */
  get textBytes(): number {
    return this.#textBytes;
  }

  /** Bytes stored for the open span's text so far: 0 while it has none. */
  get openTextBytes(): number {
    return this.#text.length - this.#openStart;
  }

  /** Marks of the open span so far. */
  get openMarks(): number {
    return this.#openMarks;
  }

  /** Appends to the open span's text, as it is (the caller has normalized it). */
  appendText(text: string): void {
    this.#textBytes += this.#text.text(text);
  }

  /**
   * Appends `text` to the open span's text, kept as `record` (what it is made from): when the
   * span is read, the list's `make(record)` makes it again.
   * @param record what `make` takes; stored as it is.
   * @param text what `make(record)` gives (counted in {@link textBytes}, not kept).
   */
  appendMade(record: Uint8Array, text: string): void {
    this.#text.byte(MADE);
    this.#text.varint(record.length);
    for (const b of record) this.#text.byte(b);
    this.#textBytes += Buffer.byteLength(text);
  }

  /** Adds a mark (SSML `mark name`) at the open span's start. */
  addMark(name: string): void {
    this.#marks.varint(Buffer.byteLength(name));
    this.#marks.text(name);
    this.#openMarks++;
  }

  /** Stores a name (a voice id, a speaker) once, for {@link settings}. @returns its number. */
  name(text: string): number {
    const at = this.#names.length;
    this.#names.varint(Buffer.byteLength(text));
    this.#names.text(text);
    return at;
  }

  /** Stores a settings record, shared by the spans that end with it. @returns its number. */
  settings(record: SpanSettingsRecord): number {
    const at = this.#names.length;
    const flags =
      (record.voice !== undefined ? SET_VOICE : 0) |
      (record.language !== undefined ? SET_LANGUAGE : 0) |
      (record.rate !== undefined ? SET_RATE : 0) |
      (record.gainDb !== undefined ? SET_GAIN : 0) |
      (record.speaker !== undefined ? SET_SPEAKER : 0);
    this.#names.varint(flags);
    if (record.voice !== undefined) this.#names.varint(record.voice);
    if (record.language !== undefined) this.#names.byte(LANGUAGES.indexOf(record.language));
    if (record.rate !== undefined) this.#names.float64(record.rate);
    if (record.gainDb !== undefined) this.#names.float64(record.gainDb);
    if (record.speaker !== undefined) this.#names.varint(record.speaker);
    return at;
  }

  /**
   * Ends the open span: its text and marks so far, with `end`'s fields. A new span opens.
   * @returns the span's number for {@link startsSentence}.
   */
  endSpan(end: SpanEnd): number {
    const r = this.#records;
    r.varint(this.openTextBytes);
    const ms = end.breakBeforeMs;
    const wholeMs = ms !== undefined && Number.isSafeInteger(ms) && ms >= 0;
    const flagsAt = r.length;
    // One byte (the flags are below 0x80), so that startsSentence can set a bit of it.
    r.byte(
      (end.newSentence !== undefined ? NEW_SENTENCE_SET : 0) |
        (end.newSentence === true ? NEW_SENTENCE_TRUE : 0) |
        (end.settings !== undefined ? HAS_SETTINGS : 0) |
        (ms !== undefined ? HAS_BREAK | (wholeMs ? 0 : BREAK_FLOAT) : 0) |
        (this.#openMarks > 0 ? HAS_MARKS : 0),
    );
    if (end.settings !== undefined) r.varint(end.settings);
    if (ms !== undefined) {
      if (wholeMs) r.varint(ms);
      else r.float64(ms);
    }
    if (this.#openMarks > 0) r.varint(this.#openMarks);
    if (end.written !== undefined) this.#written.set(this.#count, end.written);
    this.#count++;
    this.#openStart = this.#text.length;
    this.#openMarks = 0;
    return flagsAt;
  }

  /**
   * Makes an ended span start a sentence (`newSentence: true`) after all: its writer learns it
   * later, asking for many spans at once (text/sentences.ts `sentenceBreaksBetween`).
   * @param span what {@link endSpan} returned for a span ended with `newSentence` set.
   */
  startsSentence(span: number): void {
    this.#records.setAt(span, this.#records.at(span) | NEW_SENTENCE_TRUE);
  }

  /**
   * The spans ended, in order, each with its settings and where its text is (see {@link SpanEntry}).
   * @param withMarks false leaves out the spans' mark names (a reader of their text alone).
   */
  *entries(withMarks = true): Generator<SpanEntry, void, undefined> {
    const records = this.#records.reader();
    const marks = this.#marks.reader();
    let textStart = 0;
    let cachedAt = -1;
    let cached: SpanSettings = {};
    for (let i = 0; i < this.#count; i++) {
      const textBytes = records.varint();
      const flags = records.byte();
      const span: SpanSettings = {};
      if ((flags & HAS_SETTINGS) !== 0) {
        const at = records.varint();
        if (at !== cachedAt) {
          cached = this.#settingsAt(at);
          cachedAt = at;
        }
        Object.assign(span, cached);
      }
      if ((flags & NEW_SENTENCE_SET) !== 0) span.newSentence = (flags & NEW_SENTENCE_TRUE) !== 0;
      if ((flags & HAS_BREAK) !== 0) span.breakBeforeMs = (flags & BREAK_FLOAT) !== 0 ? records.float64() : records.varint();
      if ((flags & HAS_MARKS) !== 0) {
        const names: string[] = [];
        for (let n = records.varint(); n > 0; n--) {
          if (withMarks) names.push(marks.string());
          else marks.skipString();
        }
        if (withMarks) span.marks = names;
      }
      const written = this.#written.get(i);
      if (written !== undefined) span.written = written;
      yield { span, textStart, storedBytes: textBytes };
      textStart += textBytes;
    }
  }

  /** The spans ended, in order, each with its text as one string. */
  *[Symbol.iterator](): Generator<SpeechSpan, void, undefined> {
    for (const entry of this.entries()) yield { text: this.textOf(entry), ...entry.span };
  }

  /** The open span's text so far, as one string (texts made when read, made). */
  openText(): string {
    return this.textOf({ span: {}, textStart: this.#openStart, storedBytes: this.openTextBytes });
  }

  /** A span's text, as one string. */
  textOf(entry: SpanEntry): string {
    const { textStart: start, storedBytes: length } = entry;
    if (this.#text.indexOf(MADE, start, start + length) === -1) return this.#text.decode(start, length);
    return [...this.textBlocks(entry)].join('');
  }

  /**
   * A span's text in blocks: of at most 64 KiB of UTF-8, and each text made when read
   * ({@link appendMade}) in one (none for an empty text).
   */
  *textBlocks(entry: SpanEntry): Generator<string, void, undefined> {
    const end = entry.textStart + entry.storedBytes;
    for (let at = entry.textStart; at < end; ) {
      const made = this.#text.indexOf(MADE, at, end);
      if (made === -1) return yield* this.#text.blocks(at, end - at);
      if (made > at) yield* this.#text.blocks(at, made - at);
      const r = this.#text.reader(made + 1);
      const length = r.varint();
      const text = this.make(this.#text.copy(r.offset, length));
      if (text !== '') yield text;
      at = r.offset + length;
    }
  }

  /**
   * The start of the spans' text joined with single spaces (what a check of the text's script
   * looks at): `[...list].map((s) => s.text).join(' ').slice(0, chars)`, without making the rest.
   * @param chars UTF-16 code units wanted.
   */
  head(chars: number): string {
    let out = '';
    let first = true;
    for (const entry of this.entries(false)) {
      if (!first) out += ' ';
      first = false;
      for (const block of this.textBlocks(entry)) {
        out += block.slice(0, chars - out.length + 1);
        if (out.length >= chars) return out.slice(0, chars);
      }
      if (out.length >= chars) break;
    }
    return out.slice(0, chars);
  }

  /** The settings record at `at` as span fields. */
  #settingsAt(at: number): SpanSettings {
    const r = this.#names.reader(at);
    const flags = r.varint();
    const span: SpanSettings = {};
    if ((flags & SET_VOICE) !== 0) span.voice = this.#names.reader(r.varint()).string();
    if ((flags & SET_LANGUAGE) !== 0) span.language = LANGUAGES[r.byte()]!;
    if ((flags & SET_RATE) !== 0) span.rate = r.float64();
    if ((flags & SET_GAIN) !== 0) span.gainDb = r.float64();
    if ((flags & SET_SPEAKER) !== 0) span.speaker = this.#names.reader(r.varint()).string();
    return span;
  }
}
