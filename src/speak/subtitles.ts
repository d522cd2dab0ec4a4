/**
 * `--subtitles FILE.srt|FILE.vtt` (docs/cli.md §1): one cue per piece of text (a sentence; a line
 * with `--lines`), written as the cues come — so subtitles work while playing, and a book's cues
 * are never all held — to a temporary file beside the target, renamed into place only when the
 * run completed, like audio files (docs/cli.md §2; the atomic writer of src/audio/file-sink.ts);
 * into a FIFO, socket or device in place, cue by cue, the same bytes (text-file.ts).
 * Formats: SubRip (`HH:MM:SS,mmm`, numbered cues) and WebVTT (W3C WebVTT §4: a `WEBVTT` header,
 * `HH:MM:SS.mmm`, `&` and `<` escaped in cue text).
 *
 * With `--words` (docs/cli.md §12.1) and word timings for a piece: WebVTT keeps one cue per
 * piece with a timestamp tag before each word after the first (`Hello <00:00:01.250>world`, W3C
 * WebVTT §4.2.2 "cue timestamp", which players render as karaoke); SubRip, which has no such tag,
 * gets one cue per word, shown while the word is spoken. A piece without timings keeps its cue.
 */
import { openTextFile, writtenInPlace, type TextFileOptions } from './text-file.js';
import { TtsError } from '../errors.js';
import type { Cue } from './audio-stage.js';

/** Subtitle formats, by the file's extension. */
export type SubtitleFormat = 'srt' | 'vtt';

/**
 * The format a `--subtitles` path asks for: by its extension; WebVTT for a FIFO, socket or device
 * written in place whose name has neither (`--subtitles /dev/stderr`), as audio there is raw
 * (docs/cli.md §1).
 * @param inPlace whether `path` is written in place (text-file.ts `writtenInPlace`).
 * @throws TtsError `usage` (exit 2) for a file whose name does not end in `.srt` or `.vtt`.
 */
export function subtitleFormat(path: string, inPlace = false): SubtitleFormat {
  const m = /\.(srt|vtt)$/i.exec(path);
  if (m === null && inPlace) return 'vtt';
  if (m === null) throw new TtsError('usage', `--subtitles ${path}: the name must end in .srt or .vtt`, { hint: 'e.g. --subtitles chapter.srt or --subtitles chapter.vtt' });
  return m[1]!.toLowerCase() as SubtitleFormat;
}

/** A subtitle file being written. */
export interface SubtitleWriter {
  /** Cues written so far. */
  readonly count: number;
  /** Appends one cue (cues come in order, not overlapping). */
  add(cue: Cue): Promise<void>;
  /** Completes the file: fsync, close, rename into place (in place: flush and close). */
  finish(): Promise<void>;
  /** Removes the temporary file; an existing file at the target stays untouched (in place: closes). Never rejects. */
  abort(): Promise<void>;
}

/**
 * Opens a subtitle file for writing (or a FIFO, socket or device, in place: text-file.ts).
 * @param options `words`: time the words (`--words`); `signal` and `verbose`: as text-file.ts
 *   `openTextFile` takes them.
 * @throws TtsError `usage` (exit 2) for a bad extension; `io_error` (exit 7) when the folder
 *   cannot be written or the target is a folder (and later, when a write, finish fails); as
 *   `openTextFile`.
 */
export async function openSubtitles(path: string, options: { words?: boolean } & TextFileOptions = {}): Promise<SubtitleWriter> {
  const format = subtitleFormat(path, await writtenInPlace(path));
  const file = await openTextFile(path, 'the subtitles', options);
  if (format === 'vtt') {
    try {
      await file.write('WEBVTT\n\n');
    } catch (error) {
      await file.abort();
      throw error;
    }
  }
  let count = 0;
  return {
    get count() {
      return count;
    },
    async add(cue) {
      if (options.words === true && cue.words !== undefined && cue.words.length > 0) {
        if (format === 'vtt') {
          count++;
          await file.write(formatKaraokeCue(cue));
        } else {
          let text = '';
          for (const word of cue.words) text += formatCue('srt', ++count, { start: word.start, end: word.end, text: word.text, span: cue.span });
          await file.write(text);
        }
        return;
      }
      count++;
      await file.write(formatCue(format, count, cue));
    },
    finish: () => file.finish(),
    abort: () => file.abort(),
  };
}

/** One cue as text, with the blank line that ends it. `index` counts from 1 (SubRip numbers its cues). */
export function formatCue(format: SubtitleFormat, index: number, cue: Cue): string {
  const text = speakerPrefix(cue.span?.speaker, format) + cueText(cue.text, format);
  const start = timestamp(cue.start, format);
  const end = timestamp(Math.max(cue.end, cue.start), format);
  return format === 'srt' ? `${index}\n${start} --> ${end}\n${text}\n\n` : `${start} --> ${end}\n${text}\n\n`;
}

/**
 * A WebVTT cue of a piece with a timestamp tag before each word after the first (W3C WebVTT
 * §4.2.2), from the piece's text as written (whitespace as in {@link cueText}, `&` `<` `>` escaped),
 * after the speaker's voice span as in {@link formatCue}.
 */
export function formatKaraokeCue(cue: Cue): string {
  const words = cue.words ?? [];
  const clean = (part: string): string => withoutControls(part).replace(/\s*[\r\n\u2028\u2029]+\s*/g, ' ').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  let body = '';
  let cursor = 0;
  words.forEach((word, i) => {
    if (i === 0 || word.charStart < cursor) return;
    body += `${clean(cue.text.slice(cursor, word.charStart))}<${timestamp(word.start, 'vtt')}>`;
    cursor = word.charStart;
  });
  body += clean(cue.text.slice(cursor));
  // Whitespace around the piece goes, as in cueText (a tag is never at either end: it precedes a word).
  body = speakerPrefix(cue.span?.speaker, 'vtt') + balancedBidi(body.replace(/^\s+/, '').replace(/\s+$/, ''));
  return `${timestamp(cue.start, 'vtt')} --> ${timestamp(Math.max(cue.end, cue.start), 'vtt')}\n${body}\n\n`;
}

/**
 * `text` without C0 and C1 control characters other than tab and line breaks (an ESC from the
 * input would reach whatever terminal or player shows the file: docs/cli.md §1 `--subtitles`).
 */
export function withoutControls(text: string): string {
  return text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g, '');
}

/** Bidirectional formatting characters (Unicode UAX #9 §2): embeddings and overrides with their PDF, isolates with their PDI. */
const BIDI_FORMATTING = /[\u202A-\u202E\u2066-\u2069]/u;
/** Deepest nesting of embeddings, overrides and isolates UAX #9 keeps (max_depth, BD2); openers past it are left out. */
const BIDI_MAX_DEPTH = 125;

/**
 * One line of a cue with its bidirectional formatting characters balanced, so that it cannot
 * reorder what comes after it where it is shown — the next line, or a terminal's prompt
 * (`--subtitles /dev/stderr`; CVE-2021-42574, "Trojan Source"): embeddings and overrides (LRE,
 * RLE, LRO, RLO) closed by a PDF, and isolates (LRI, RLI, FSI) closed by a PDI within the line are
 * kept, as are the marks (LRM, RLM, ALM), so right-to-left subtitles read as written; a PDF or PDI
 * that closes nothing is left out; what is left open at the line's end is closed there (PDFs and
 * PDIs in the order UAX #9 §3.3.2 pairs them: a PDI also closes the embeddings opened inside its
 * isolate, and is preceded by their PDFs here). docs/cli.md §1 `--subtitles`.
 */
export function balancedBidi(line: string): string {
  if (!BIDI_FORMATTING.test(line)) return line;
  const open: ('embedding' | 'isolate')[] = [];
  /** Openers left out past the deepest nesting, innermost last: their closers are left out too. */
  const overflow: ('embedding' | 'isolate')[] = [];
  let out = '';
  for (const ch of line) {
    const kind = ch >= '\u202A' && ch <= '\u202E' && ch !== '\u202C' ? 'embedding' : ch >= '\u2066' && ch <= '\u2068' ? 'isolate' : undefined;
    if (kind !== undefined) {
      if (open.length + overflow.length >= BIDI_MAX_DEPTH) overflow.push(kind);
      else {
        open.push(kind);
        out += ch;
      }
      continue;
    }
    if (ch === '\u202C') {
      // A PDF closes the innermost embedding, never across an isolate (UAX #9 X7).
      if (overflow.includes('isolate')) continue;
      if (overflow.length > 0) overflow.pop();
      else if (open.at(-1) === 'embedding') {
        open.pop();
        out += ch;
      }
      continue;
    }
    if (ch === '\u2069') {
      // A PDI closes the innermost isolate and the embeddings inside it (X6a); none open, it is left out.
      const inOverflow = overflow.lastIndexOf('isolate');
      if (inOverflow >= 0) {
        overflow.length = inOverflow;
        continue;
      }
      overflow.length = 0;
      const at = open.lastIndexOf('isolate');
      if (at < 0) continue;
      while (open.length > at + 1) {
        open.pop();
        out += '\u202C';
      }
      open.pop();
      out += ch;
      continue;
    }
    out += ch;
  }
  for (let k = open.length - 1; k >= 0; k--) out += open[k] === 'isolate' ? '\u2069' : '\u202C';
  return out;
}

/**
 * The text of a cue: the piece as written, without the whitespace around it, and with every run
 * of whitespace that holds a line break made one space (a blank line would end the cue); control
 * characters are dropped, and its bidirectional formatting balanced ({@link balancedBidi}).
 */
export function cueText(text: string, format: SubtitleFormat): string {
  const one = balancedBidi(withoutControls(text).trim().replace(/\s*[\r\n\u2028\u2029]+\s*/g, ' '));
  return format === 'vtt' ? one.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : one;
}

/**
 * The speaker of a dialogue script's cue (docs/cli.md §11.2): a WebVTT voice span `<v Alice>`
 * (W3C WebVTT §4.2.2: the annotation may not hold `&`, `<`, `>` or a line break, so they are
 * escaped or made spaces), or `Alice: ` in SubRip, which has no voice markup; '' for no speaker.
 * Its bidirectional formatting is balanced on its own ({@link balancedBidi}): a name cannot
 * reorder the cue's text.
 */
export function speakerPrefix(speaker: string | undefined, format: SubtitleFormat): string {
  if (speaker === undefined) return '';
  const one = balancedBidi(withoutControls(speaker).replace(/[\r\n\u2028\u2029]+/g, ' '));
  return format === 'vtt' ? `<v ${one.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}>` : `${one}: `;
}

/** `HH:MM:SS,mmm` (SubRip) or `HH:MM:SS.mmm` (WebVTT), from seconds, rounded to the millisecond. */
export function timestamp(seconds: number, format: SubtitleFormat): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  const pad = (n: number, w: number): string => String(n).padStart(w, '0');
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${format === 'srt' ? ',' : '.'}${pad(ms % 1000, 3)}`;
}

