/**
 * SSML input (docs/cli.md §11.1; W3C SSML 1.1 semantics for a documented subset) → speech spans
 * (text/spans.ts). Parsed with saxes, a streaming XML parser that never expands entities other
 * than XML's five and character references, and never reads a DTD: a DOCTYPE is refused outright,
 * so no billion laughs and no external entity can reach us. Depth is capped, size is the reader's
 * `--max-input`.
 *
 * Elements: speak, p, s (sentence boundaries), break, prosody (rate, volume), voice (name), lang
 * (xml:lang), sub (alias), say-as (text/say-as.ts), emphasis, mark. `audio` is refused (tts
 * fetches nothing). Anything else is exit 2 naming the element and its line:column, unless
 * `lenient`, which speaks its text content instead.
 */
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { mappedOf, RunMappedText } from '../engine/mapped-text.js';
import { TtsError } from '../errors.js';
import { LANGUAGES, type Language } from '../protocol/types.js';
import { renderSayAs, SAY_AS_KINDS, SayAsError, type SayAsKind } from './say-as.js';
import { sentenceBreakBetween } from './sentences.js';
import type { SpeechSpan } from './spans.js';

/** Deepest nesting of elements accepted (speak counts as 1). */
export const SSML_MAX_DEPTH = 64;

/** Longest single break, in milliseconds (several breaks in a row add up to this at most). */
export const SSML_MAX_BREAK_MS = 60_000;

/** `break strength` → milliseconds (docs/cli.md §11.1); a `break` with neither attribute is `medium`. */
export const BREAK_STRENGTH_MS: Readonly<Record<string, number>> = { none: 0, 'x-weak': 100, weak: 250, medium: 500, strong: 800, 'x-strong': 1200 };

/** `prosody rate` names → rate factor (docs/cli.md §11.1). */
export const RATE_NAMES: Readonly<Record<string, number>> = { 'x-slow': 0.5, slow: 0.75, medium: 1, default: 1, fast: 1.25, 'x-fast': 1.5 };

/** `prosody volume` names → gain in dB (docs/cli.md §11.1); `silent` is no sound at all. */
export const VOLUME_NAMES: Readonly<Record<string, number>> = { silent: -Infinity, 'x-soft': -12, soft: -6, medium: 0, default: 0, loud: 6, 'x-loud': 10 };

/** `emphasis level` → rate factor and gain in dB (docs/cli.md §11.1); no level is `moderate`. */
export const EMPHASIS_LEVELS: Readonly<Record<string, { rate: number; gainDb: number }>> = {
  strong: { rate: 0.85, gainDb: 4 },
  moderate: { rate: 0.92, gainDb: 2 },
  none: { rate: 1, gainDb: 0 },
  reduced: { rate: 1.08, gainDb: -3 },
};

/** Slowest and fastest rate an SSML document may ask for (the audio stage clamps rate × --speed again). */
const RATE_RANGE: readonly [number, number] = [0.25, 4];

/** How to read one SSML document. */
export interface SsmlOptions {
  /** The run's language (`--language`): a span without `xml:lang` or a voice of its own has none. */
  language: Language;
  /** `--ssml-lenient`: an unknown element (and `audio`) speaks its text content instead of failing. */
  lenient: boolean;
  /** Where the document came from, for messages: a path, `standard input` or `the words`. */
  source: string;
  /**
   * Applied to every plain text node (the lexicon, text/lexicon.ts), with the language it is
   * spoken in — never to a `sub` alias or `say-as` output. Default: the identity. What it gives
   * with its map (the lexicon's RunMappedText) lets a span it changed keep one (SpeechSpan
   * `written`); a text alone counts as the whole node replaced.
   */
  rewrite?: ((text: string, language: Language) => string | RunMappedText) | undefined;
}


/**
 * A span's text as sent (`text`: its parts joined, white space made one space, trimmed) mapped to
 * the same made of the parts as they were before the lexicon — the span's text as written — so
 * its words are told there (SpeechSpan `written`, docs/cli.md §12.1). When the map cannot give
 * `text` back, the whole span is one replacement of the text as written.
 * @returns the map, or undefined when the text as written is `text` itself.
 */
function writtenSpan(parts: readonly RunMappedText[], text: string): RunMappedText | undefined {
  const tidy = (m: RunMappedText): RunMappedText => m.replace(/\s+/gu, () => ' ').replace(/^ | $/gu, () => '');
  const whole = RunMappedText.concat(parts);
  const asWritten = tidy(RunMappedText.of(whole.source));
  const sent = tidy(whole);
  const mapped = sent.text === text ? sent.relativeTo(asWritten) : RunMappedText.of(asWritten.text).edit([{ start: 0, end: asWritten.text.length, text }]);
  return mapped.changed ? mapped : undefined;
}

/** What an open element changes for the text inside it. */
interface Frame {
  name: string;
  voice: string | undefined;
  language: Language | undefined;
  rate: number;
  gainDb: number;
  /** Inside `sub` or `say-as`: the text is collected, not spoken as it is. */
  collect?: { kind: 'sub'; alias: string } | { kind: 'say-as'; as: SayAsKind; format: string | undefined; text: string; at: { line: number; column: number } } | undefined;
}

/**
 * Reads an SSML document into speech spans, in document order.
 * @param blocks the document's text, in blocks as read (already capped at `--max-input`).
 * @returns the spans: each with its text as sent (say-as rendered, sub replaced, `rewrite`
 *   applied), its voice and language when they differ from the run's, its rate and gain when not
 *   neutral, the break and marks before it, and whether it starts a sentence. The last span may
 *   have no text (a trailing break or mark).
 * @throws TtsError `usage` (exit 2) naming `source:line:column`: malformed XML, a DOCTYPE, an
 *   undefined entity, nesting deeper than {@link SSML_MAX_DEPTH}, a root other than `speak`, an
 *   unknown element or attribute (unless lenient), `audio` (unless lenient), a bad attribute value,
 *   say-as content that is not what it says, a document with nothing to speak.
 */
export async function ssmlSpans(blocks: AsyncIterable<string> | Iterable<string>, options: SsmlOptions): Promise<SpeechSpan[]> {
  const parser = new SaxesParser<{ position: true; xmlns: false }>({ position: true, xmlns: false });
  const spans: SpeechSpan[] = [];
  const stack: Frame[] = [];
  const rewrite = options.rewrite;
  /** Raw text since the last tag: a text node as a whole, whatever blocks it came in. */
  let raw = '';
  /** Text of the span being built, with the settings of the frame on top. */
  let buffer = '';
  /** The parts of {@link buffer}, each mapped to what it was before the rewrite (a sub alias, say-as output, white space: themselves). */
  let parts: RunMappedText[] = [];
  /** Whether the rewrite changed a part of the span being built. */
  let rewritten = false;
  /** Appends text to the span being built (its map kept only when there is a rewrite). */
  const add = (part: string | RunMappedText): void => {
    if (rewrite === undefined && typeof part === 'string') {
      buffer += part;
      return;
    }
    const mapped = typeof part === 'string' ? RunMappedText.of(part) : part;
    buffer += mapped.text;
    parts.push(mapped);
    if (mapped.changed) rewritten = true;
  };
  let pendingBreak: number | undefined;
  let pendingMarks: string[] = [];
  let pendingSentence = true;
  let lastText = '';
  let sawRoot = false;

  const fail = (message: string, at: { line: number; column: number } = { line: parser.line, column: parser.column }, hint?: string): never => {
    throw new TtsError('usage', `${options.source}:${at.line}:${at.column}: ${message}`, { hint: hint ?? 'see docs/cli.md §11.1 for the SSML tts reads' });
  };
  const top = (): Frame => stack[stack.length - 1]!;
  const languageOf = (frame: Frame): Language => frame.language ?? options.language;

  /** Ends the text node read so far: whitespace collapsed, rewritten (plain text only), added to the span. */
  const endText = (): void => {
    if (raw === '') return;
    const text = raw.replace(/\s+/gu, ' ');
    raw = '';
    const frame = top();
    if (frame.collect?.kind === 'say-as') frame.collect.text += text;
    else if (frame.collect?.kind === 'sub') return;
    else add(text.trim() === '' || rewrite === undefined ? text : mappedOf(text, rewrite(text, languageOf(frame))));
  };
  /** Ends the span being built (its settings are the top frame's): a new span starts at the next text. */
  const endSpan = (): void => {
    const text = buffer.replace(/\s+/gu, ' ').trim();
    const written = rewritten && text !== '' ? writtenSpan(parts, text) : undefined;
    buffer = '';
    parts = [];
    rewritten = false;
    if (text === '') return;
    const frame = top();
    const span: SpeechSpan = { text, newSentence: pendingSentence || lastText === '' || sentenceBreakBetween(`${lastText} `, text) };
    if (written !== undefined) span.written = written;
    if (frame.voice !== undefined) span.voice = frame.voice;
    if (frame.language !== undefined) span.language = frame.language;
    if (frame.rate !== 1) span.rate = frame.rate;
    if (frame.gainDb !== 0) span.gainDb = frame.gainDb;
    if (pendingBreak !== undefined) span.breakBeforeMs = pendingBreak;
    if (pendingMarks.length > 0) span.marks = pendingMarks;
    spans.push(span);
    pendingBreak = undefined;
    pendingMarks = [];
    pendingSentence = false;
    lastText = text;
  };
  const sentenceBoundary = (): void => {
    endSpan();
    pendingSentence = true;
  };

  parser.on('doctype', () => fail('a DOCTYPE is not allowed in SSML (no DTD is read and no entity is defined)', undefined, 'remove the <!DOCTYPE …> declaration'));
  parser.on('text', (text) => {
    if (stack.length === 0) {
      if (text.trim() !== '') fail('text outside <speak>');
      return;
    }
    raw += text;
  });
  parser.on('cdata', (text) => {
    raw += text;
  });
  /** Where the start tag being read begins (its '<'), 1-based. */
  let tagAt = { line: 1, column: 1 };
  parser.on('opentagstart', (tag) => {
    // saxes is just past the name here: the '<' is the name's length and one before.
    tagAt = { line: parser.line, column: Math.max(1, parser.column - tag.name.length - 1) };
  });
  parser.on('opentag', (tag) => {
    const at = tagAt;
    if (stack.length >= SSML_MAX_DEPTH) fail(`elements nested deeper than ${SSML_MAX_DEPTH}`, at);
    if (stack.length === 0) {
      if (sawRoot || tag.name !== 'speak') fail(sawRoot ? 'a second root element after </speak>' : `the root element is <${tag.name}>, not <speak>`, at);
      sawRoot = true;
    }
    const parent = stack[stack.length - 1];
    if (parent?.collect !== undefined) fail(`<${parent.collect.kind}> holds text only, not <${tag.name}>`, at);
    if (parent !== undefined) endText();
    const frame: Frame = parent === undefined ? { name: tag.name, voice: undefined, language: undefined, rate: 1, gainDb: 0 } : { ...parent, name: tag.name, collect: undefined };
    const attrs = attributes(tag, at);
    switch (tag.name) {
      case 'speak':
        if (parent !== undefined) fail('<speak> inside <speak>', at);
        attrs.allow('version', 'xml:lang', 'xmlns', 'xmlns:*', 'xsi:*', 'xml:base', 'onlangfailure');
        frame.language = lang(attrs.get('xml:lang'), at) ?? frame.language;
        break;
      case 'p':
      case 's':
        attrs.allow('xml:lang');
        sentenceBoundary();
        frame.language = lang(attrs.get('xml:lang'), at) ?? frame.language;
        break;
      case 'break': {
        attrs.allow('time', 'strength');
        endSpan();
        const ms = breakMs(attrs.get('time'), attrs.get('strength'), at);
        pendingBreak = Math.min(SSML_MAX_BREAK_MS, (pendingBreak ?? 0) + ms);
        break;
      }
      case 'prosody': {
        attrs.allow('rate', 'volume');
        endSpan();
        const rate = attrs.get('rate');
        const volume = attrs.get('volume');
        if (rate !== undefined) frame.rate = clampRate(frame.rate * rateOf(rate, at), at);
        if (volume !== undefined) frame.gainDb = frame.gainDb + volumeOf(volume, at);
        break;
      }
      case 'emphasis': {
        attrs.allow('level');
        endSpan();
        const level = EMPHASIS_LEVELS[attrs.get('level') ?? 'moderate'];
        if (level === undefined) fail(`emphasis level="${attrs.get('level')}" is not one of ${Object.keys(EMPHASIS_LEVELS).join(', ')}`, at);
        frame.rate = clampRate(frame.rate * level!.rate, at);
        frame.gainDb += level!.gainDb;
        break;
      }
      case 'voice': {
        attrs.allow('name');
        const name = attrs.require('name');
        if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/u.test(name)) fail(`voice name="${name}" is not a voice id`, at);
        endSpan();
        frame.voice = name;
        // A preset id names its language (ja-man-1); a voice of another kind keeps the language it is in.
        const own = /^(ja|en)-/u.exec(name)?.[1] as Language | undefined;
        if (own !== undefined) frame.language = own;
        break;
      }
      case 'lang': {
        attrs.allow('xml:lang', 'onlangfailure');
        endSpan();
        frame.language = lang(attrs.require('xml:lang'), at);
        break;
      }
      case 'sub':
        attrs.allow('alias');
        frame.collect = { kind: 'sub', alias: attrs.require('alias') };
        break;
      case 'say-as': {
        attrs.allow('interpret-as', 'format', 'detail');
        const as = attrs.require('interpret-as');
        if (!(SAY_AS_KINDS as readonly string[]).includes(as)) fail(`say-as interpret-as="${as}" is not one of ${SAY_AS_KINDS.join(', ')}`, at);
        frame.collect = { kind: 'say-as', as: as as SayAsKind, format: attrs.get('format'), text: '', at };
        break;
      }
      case 'mark': {
        attrs.allow('name');
        const name = attrs.require('name');
        endSpan();
        pendingMarks.push(name);
        break;
      }
      case 'audio':
        if (!options.lenient) fail('<audio> is not supported: tts fetches no audio', at, 'remove it, or give --ssml-lenient to speak its text content instead');
        break;
      default:
        if (!options.lenient) fail(`<${tag.name}> is not an SSML element tts reads`, at, 'see docs/cli.md §11.1 for the elements read, or give --ssml-lenient to speak its text content');
    }
    stack.push(frame);
  });
  parser.on('closetag', (tag) => {
    endText();
    const frame = top();
    // Replacements go in as written: the text around them has its own spaces (or none, in Japanese).
    if (frame.collect?.kind === 'sub') add(frame.collect.alias);
    else if (frame.collect?.kind === 'say-as') {
      try {
        add(`${renderSayAs(frame.collect.as, frame.collect.format, frame.collect.text, languageOf(frame))}`);
      } catch (error) {
        if (error instanceof SayAsError) fail(error.message, frame.collect.at);
        throw error;
      }
    }
    // The span inside a p, s, prosody, emphasis, voice or lang ends with it (its settings are the
    // element's); the text after it is spoken as before.
    if (tag.name === 'p' || tag.name === 's') sentenceBoundary();
    else if (['speak', 'prosody', 'emphasis', 'voice', 'lang'].includes(tag.name ?? '')) endSpan();
    stack.pop();
  });

  try {
    for await (const block of blocks) parser.write(block);
    parser.close();
  } catch (error) {
    if (error instanceof TtsError) throw error;
    // saxes says "line:column: what" for malformed XML.
    const message = error instanceof Error ? error.message : String(error);
    const m = /^(\d+:\d+): (.*)$/su.exec(message);
    throw new TtsError('usage', `${options.source}:${m?.[1] ?? `${parser.line}:${parser.column}`}: malformed SSML: ${m?.[2] ?? message}`, {
      hint: 'check the markup (every element closed, & written &amp;)',
    });
  }
  if (!sawRoot) throw new TtsError('usage', `${options.source}: no <speak> element`, { hint: 'SSML is one <speak>…</speak> document' });
  if (pendingBreak !== undefined || pendingMarks.length > 0) {
    const tail: SpeechSpan = { text: '' };
    if (pendingBreak !== undefined) tail.breakBeforeMs = pendingBreak;
    if (pendingMarks.length > 0) tail.marks = pendingMarks;
    spans.push(tail);
  }
  if (!spans.some((s) => s.text !== '')) throw new TtsError('usage', `${options.source}: the SSML has no text to speak`, { hint: 'put some text inside <speak>' });
  return spans;

  /** The attributes of one start tag, checked against what its element takes. */
  function attributes(tag: SaxesTagPlain, at: { line: number; column: number }) {
    const all = tag.attributes as Record<string, string>;
    return {
      get: (name: string): string | undefined => all[name],
      require(name: string): string {
        const value = all[name];
        if (value === undefined || value.trim() === '') return fail(`<${tag.name}> needs a ${name}="…" attribute`, at);
        return value.trim();
      },
      allow(...names: string[]): void {
        for (const name of Object.keys(all)) {
          const ok = names.some((n) => (n.endsWith(':*') ? name.startsWith(n.slice(0, -1)) : n === name));
          if (!ok && !options.lenient) fail(`<${tag.name}> attribute ${name} is not supported`, at, 'remove it, or give --ssml-lenient to ignore it');
        }
      },
    };
  }

  function lang(value: string | undefined, at: { line: number; column: number }): Language | undefined {
    if (value === undefined) return undefined;
    const primary = value.trim().toLowerCase().split(/[-_]/u)[0] as Language;
    if (!(LANGUAGES as readonly string[]).includes(primary)) return fail(`xml:lang="${value}": tts speaks ${LANGUAGES.join(' and ')}`, at);
    return primary;
  }

  function breakMs(time: string | undefined, strength: string | undefined, at: { line: number; column: number }): number {
    if (time !== undefined) {
      const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s)\s*$/u.exec(time);
      if (m === null) return fail(`break time="${time}" is not a duration such as 500ms or 1.5s`, at);
      const ms = Number(m[1]) * (m[2] === 's' ? 1000 : 1);
      if (ms > SSML_MAX_BREAK_MS) return fail(`break time="${time}" is longer than ${SSML_MAX_BREAK_MS / 1000} s`, at);
      return Math.round(ms);
    }
    const ms = BREAK_STRENGTH_MS[strength ?? 'medium'];
    if (ms === undefined) return fail(`break strength="${strength}" is not one of ${Object.keys(BREAK_STRENGTH_MS).join(', ')}`, at);
    return ms;
  }

  function rateOf(value: string, at: { line: number; column: number }): number {
    const named = RATE_NAMES[value.trim()];
    if (named !== undefined) return named;
    // "150%" is 1.5 times the rate; "+20%"/"-20%" change it by that much (SSML 1.0's relative form).
    const m = /^\s*([+-]?)(\d+(?:\.\d+)?)%\s*$/u.exec(value);
    if (m === null) return fail(`prosody rate="${value}" is not a percentage (150%, +20%) or one of ${Object.keys(RATE_NAMES).join(', ')}`, at);
    const n = Number(m[2]) / 100;
    return m[1] === '' ? n : m[1] === '+' ? 1 + n : 1 - n;
  }

  function clampRate(rate: number, at: { line: number; column: number }): number {
    if (!(rate >= RATE_RANGE[0] && rate <= RATE_RANGE[1])) return fail(`prosody rate ${Math.round(rate * 100)}% is outside ${RATE_RANGE[0] * 100}% … ${RATE_RANGE[1] * 100}%`, at);
    return rate;
  }

  function volumeOf(value: string, at: { line: number; column: number }): number {
    const named = VOLUME_NAMES[value.trim()];
    if (named !== undefined) return named;
    const m = /^\s*([+-]?\d+(?:\.\d+)?)\s*dB\s*$/u.exec(value);
    if (m === null) return fail(`prosody volume="${value}" is not in dB (+6dB, -3dB) or one of ${Object.keys(VOLUME_NAMES).join(', ')}`, at);
    const db = Number(m[1]);
    if (db > 20) return fail(`prosody volume="${value}" is louder than +20dB`, at);
    return db;
  }
}
