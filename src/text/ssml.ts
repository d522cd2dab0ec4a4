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
import { RunMappedText } from '../engine/mapped-text.js';
import { MAX_MAPPED_TEXT_UNITS } from './lexicon.js';
import { TtsError } from '../errors.js';
import { quoteInput } from '../cli/escape.js';
import { LANGUAGES, type Language } from '../protocol/types.js';
import { renderSayAs, SAY_AS_KINDS, SayAsError, sayAsTooLong, type SayAsKind } from './say-as.js';
import { JOIN_CONTEXT_CHARS, sentenceBreaksBetween } from './sentences.js';
import { SpanList } from './span-list.js';
import { CollapsedText, collapseRuns, collapseWhitespace, windowsOf } from './spans.js';

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

/**
 * Most characters (UTF-16 code units, entities read) of all the attribute values of one start tag
 * (docs/cli.md §11.1): an attribute is a name, a time or a short text. saxes holds a value being
 * read as a string grown a line or an entity at a time, some 60 bytes each: one `sub alias` of
 * 40 MiB of short lines took 1.4 GB, many attributes of entities as much.
 */
export const SSML_MAX_ATTRIBUTE_CHARS = 1024 * 1024;

/** Code units of say-as content gathered before its white space is collapsed and its length checked. */
const SAY_AS_GATHER_UNITS = 64 * 1024;

/** Slowest and fastest rate an SSML document may ask for (the audio stage clamps rate × --speed again). */
const RATE_RANGE: readonly [number, number] = [0.25, 4];

/**
 * saxes's states (its private `state` numbers, found by parsing a few starts of documents, so a
 * new saxes that numbers them otherwise is still read right) in which it is growing the private
 * `text` of: a text node, a CDATA section, or something tts drops (a comment, a processing
 * instruction, a DOCTYPE) — and of an attribute value, which is only measured. saxes's public API hands a text node on only when it ends, so there is
 * no other way; package.json pins the saxes this was written for (6.0.0). Undefined when saxes no
 * longer has them: nothing is then taken from it, the output is the same and memory grows with a
 * text node's lines, and test/text/ssml.test.ts fails ({@link SAXES_TEXT_TAKEN}).
 */
const SAXES_STATES = ((): { text: unknown; cdata: unknown; attribute: unknown; skipped: Set<unknown> } | undefined => {
  const stateAfter = (xml: string): unknown => {
    const parser = new SaxesParser({ xmlns: false });
    parser.on('text', () => {});
    parser.write(xml);
    const inner = parser as unknown as { state?: unknown; text?: unknown };
    return typeof inner.text === 'string' ? inner.state : undefined;
  };
  try {
    const text = stateAfter('<a>x');
    const cdata = stateAfter('<a><![CDATA[x');
    const attribute = stateAfter('<a b="x');
    const skipped = ['<a><!--x', '<a><?t x', '<!DOCTYPE a', '<!DOCTYPE a "x', '<!DOCTYPE a [', '<!DOCTYPE a [ "x', '<!DOCTYPE a [<!--x', '<!DOCTYPE a [<?x'].map(stateAfter);
    const all = [text, cdata, attribute, ...skipped];
    if (all.some((s) => typeof s !== 'number') || new Set(all).size !== all.length || stateAfter("<a b='x") !== attribute) return undefined;
    return { text, cdata, attribute, skipped: new Set(skipped) };
  } catch {
    return undefined;
  }
})();

/**
 * Whether saxes's private `state` and `text` have the shape text/ssml.ts reads (SAXES_STATES found):
 * the text of a text node, a CDATA section, a comment… is then taken from saxes after every block
 * (see `drain` in {@link ssmlSpans}) rather than held whole until it ends. False only for a saxes
 * other than the one package.json pins; test/text/ssml.test.ts then fails, naming the cause.
 */
export const SAXES_TEXT_TAKEN: boolean = SAXES_STATES !== undefined;

/**
 * The attributes of one start tag, checked against what its element takes. A class, not an
 * object of closures: one is made for every element of a document of millions.
 */
class TagAttributes {
  readonly #all: Record<string, string>;

  constructor(
    private readonly tag: SaxesTagPlain,
    private readonly at: { line: number; column: number },
    private readonly lenient: boolean,
    private readonly fail: (message: string, at?: { line: number; column: number }, hint?: string) => never,
  ) {
    this.#all = tag.attributes as Record<string, string>;
  }

  /** The attribute's value as written; undefined when the tag has none. */
  get(name: string): string | undefined {
    return this.#all[name];
  }

  /** The attribute's value, trimmed. @throws TtsError `usage` when it is missing or blank. */
  require(name: string): string {
    const value = this.#all[name];
    if (value === undefined || value.trim() === '') return this.fail(`<${this.tag.name}> needs a ${name}="…" attribute`, this.at);
    return value.trim();
  }

  /** @throws TtsError `usage` for an attribute not in `names` (`xmlns:*` for a prefix), unless lenient. */
  allow(...names: string[]): void {
    for (const name in this.#all) {
      const ok = names.some((n) => (n.endsWith(':*') ? name.startsWith(n.slice(0, -1)) : n === name));
      if (!ok && !this.lenient) this.fail(`<${this.tag.name}> attribute ${quoteInput(name)} is not supported`, this.at, 'remove it, or give --ssml-lenient to ignore it');
    }
  }
}

/**
 * A message of saxes for malformed XML, as ours quote input: saxes writes the name it stumbled on
 * after a colon (`unclosed tag: NAME`, `duplicate attribute: NAME.`), whole; that part is cut to
 * its first characters (cli/escape.ts quoteInput), the words before it kept.
 */
function saxesMessage(message: string): string {
  const colon = message.indexOf(': ');
  return colon < 0 ? quoteInput(message, 200) : `${message.slice(0, colon + 2)}${quoteInput(message.slice(colon + 2))}`;
}

/**
 * A say-as element as {@link sayAsOfRecord} reads it back: its kind, language, whether it has a
 * `format` (and then its length, 4 bytes, and UTF-8), and its content (UTF-8, the rest).
 */
function sayAsRecord(as: SayAsKind, format: string | undefined, content: string, language: Language): Buffer {
  const head = Buffer.from([SAY_AS_KINDS.indexOf(as), LANGUAGES.indexOf(language), format === undefined ? 0 : 1]);
  if (format === undefined) return Buffer.concat([head, Buffer.from(content)]);
  const formatBytes = Buffer.from(format);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(formatBytes.length);
  return Buffer.concat([head, length, formatBytes, Buffer.from(content)]);
}

/** The text of a say-as element kept by {@link sayAsRecord}, rendered again (text/say-as.ts `renderSayAs`). */
function sayAsOfRecord(record: Buffer): string {
  const as = SAY_AS_KINDS[record[0]!]!;
  const language = LANGUAGES[record[1]!]!;
  if (record[2] === 0) return renderSayAs(as, undefined, record.toString('utf8', 3), language);
  const length = record.readUInt32LE(3);
  return renderSayAs(as, record.toString('utf8', 7, 7 + length), record.toString('utf8', 7 + length), language);
}

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
   * `written`); a text alone leaves its span without one (its words told in the text as sent).
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
  /** The voice id, as {@link SpanList.name} stored it. */
  voice: number | undefined;
  language: Language | undefined;
  rate: number;
  gainDb: number;
  /** The settings record of the spans inside, once one is stored; shared with the children that change nothing. */
  record: { at?: number };
  /** Inside `sub` or `say-as`: the text is collected, not spoken as it is. */
  collect?:
    | { kind: 'sub'; alias: string }
    /** `text` in parts of `units` code units in all; collapsed into one part every {@link SAY_AS_GATHER_UNITS}. */
    | { kind: 'say-as'; as: SayAsKind; format: string | undefined; text: string[]; units: number; at: { line: number; column: number } }
    | undefined;
}

/**
 * Reads an SSML document into speech spans, in document order.
 * @param blocks the document's text, in blocks as read (already capped at `--max-input`).
 * @returns the spans (a {@link SpanList}: held compactly, read in order): each with its text as
 *   sent (say-as rendered, sub replaced, `rewrite` applied, white space collapsed), its voice and
 *   language when they differ from the run's, its rate and gain when not neutral, the break and
 *   marks before it, and whether it starts a sentence. The last span may have no text (a
 *   trailing break or mark).
 * @throws TtsError `usage` (exit 2) naming `source:line:column`: malformed XML, a DOCTYPE, an
 *   undefined entity, nesting deeper than {@link SSML_MAX_DEPTH}, a root other than `speak`, an
 *   unknown element or attribute (unless lenient), `audio` (unless lenient), a bad attribute value,
 *   attribute values of one tag longer than {@link SSML_MAX_ATTRIBUTE_CHARS} in all, say-as content
 *   that is not what it says (or too long: refused as soon as it is), a document with nothing to speak.
 */
export async function ssmlSpans(blocks: AsyncIterable<string> | Iterable<string>, options: SsmlOptions): Promise<SpanList> {
  const parser = new SaxesParser<{ position: true; xmlns: false }>({ position: true, xmlns: false });
  const spans = new SpanList(sayAsOfRecord);
  const stack: Frame[] = [];
  const rewrite = options.rewrite;
  /**
   * With a lexicon: the text since the last tag, white space collapsed, in parts — a text node is
   * rewritten whole, whatever blocks it came in. Without one, text goes to the span as it comes.
   */
  let raw: string[] = [];
  let rawEndsInSpace = false;
  // The open span's text is written to `spans` as it comes, white space collapsed and trimmed.
  /** The open span's first and last {@link JOIN_CONTEXT_CHARS} code units (where a sentence ends). */
  let head = '';
  let tail = '';
  /** The last span's last code units; '' before the first span. */
  let lastTail = '';
  /**
   * Spans ended as going on with the sentence before, whose text may start a new one all the
   * same: asked of the segmenter many at once (text/sentences.ts `sentenceBreaksBetween`).
   */
  let joins: { span: number; join: [before: string, after: string] }[] = [];
  const settleJoins = (): void => {
    const breaks = sentenceBreaksBetween(joins.map((j) => j.join));
    for (const [i, j] of joins.entries()) if (breaks[i] === true) spans.startsSentence(j.span);
    joins = [];
  };
  /**
   * With a lexicon, the parts of the open span's text, each mapped to what it was before the
   * lexicon (a sub alias, say-as output, white space: themselves), for the span's map to the text
   * as written (SpeechSpan `written`, docs/cli.md §12.1); null when the span keeps none (a part
   * the lexicon gave without its map, or parts longer than {@link MAX_MAPPED_TEXT_UNITS} in all).
   */
  let parts: RunMappedText[] | null = [];
  /** Code units of {@link parts}' texts as sent and as written. */
  let partUnits = 0;
  /** Whether the lexicon changed a part of the open span. */
  let rewritten = false;
  /** Notes a part of the open span's text (with a lexicon): a text alone is as written unless `unmapped`. */
  const mapPart = (part: string | RunMappedText, unmapped = false): void => {
    if (rewrite === undefined || parts === null) return;
    if (typeof part === 'string' && unmapped) {
      parts = null;
      return;
    }
    const mapped = typeof part === 'string' ? RunMappedText.of(part) : part;
    partUnits += mapped.text.length + mapped.source.length;
    if (partUnits > 2 * MAX_MAPPED_TEXT_UNITS) {
      parts = null;
      return;
    }
    parts.push(mapped);
    if (mapped.changed) rewritten = true;
  };
  let pendingBreak: number | undefined;
  let pendingSentence = true;
  let sawRoot = false;

  const fail = (message: string, at: { line: number; column: number } = { line: parser.line, column: parser.column }, hint?: string): never => {
    throw new TtsError('usage', `${options.source}:${at.line}:${at.column}: ${message}`, { hint: hint ?? 'see docs/cli.md §11.1 for the SSML tts reads' });
  };
  const top = (): Frame => stack[stack.length - 1]!;
  const languageOf = (frame: Frame): Language => frame.language ?? options.language;

  /** Writes `text` to the open span. */
  const put = (text: string): void => {
    spans.appendText(text);
    track(text);
  };
  /** Notes `text`, written to the open span, for where its sentences end. */
  const track = (text: string): void => {
    if (head.length < JOIN_CONTEXT_CHARS) head += text.slice(0, JOIN_CONTEXT_CHARS - head.length);
    tail = text.length >= JOIN_CONTEXT_CHARS ? text.slice(-JOIN_CONTEXT_CHARS) : (tail + text).slice(-JOIN_CONTEXT_CHARS);
  };
  /**
   * Adds text to the open span, every run of white space one space and none at its start or
   * end: the span's text is what `.replace(/\s+/gu, ' ').trim()` makes of all that was added to
   * it, made a window at a time (a global replace keeps every match of a whole text: 270 MB for
   * 16 MB of prose).
   */
  const collapsed = new CollapsedText(put);
  const spanText = (text: string): void => collapsed.add(text);
  /** Text of the element on top, as it comes (a text node may come in several parts). */
  const takeText = (text: string): void => {
    const frame = top();
    if (frame.collect?.kind === 'say-as') gatherSayAs(frame.collect, text);
    else if (frame.collect?.kind === 'sub') return;
    else if (rewrite !== undefined) takeRaw(text);
    else spanText(text);
  };
  /**
   * Adds to a say-as element's content, refused (exit 2) as soon as what was read of it is longer
   * than text/say-as.ts allows, with the message its end would give: one element of 40 MiB is
   * never held whole (it took 356 MB before it was refused).
   */
  const gatherSayAs = (collect: Extract<Frame['collect'], { kind: 'say-as' }>, text: string): void => {
    collect.text.push(text);
    collect.units += text.length;
    if (collect.units <= SAY_AS_GATHER_UNITS) return;
    const content = collapseWhitespace(collect.text.join(''));
    collect.text = [content];
    collect.units = content.length;
    const tooLong = sayAsTooLong(collect.as, content.trim());
    if (tooLong !== undefined) fail(tooLong.message, collect.at);
  };
  /** Keeps part of a text node for the lexicon, every run of white space one space (as `.replace(/\s+/gu, ' ')` of the whole node). */
  const takeRaw = (text: string): void => {
    for (const window of windowsOf(text)) {
      let collapsed = collapseRuns(window);
      if (rawEndsInSpace && collapsed.charCodeAt(0) === 0x20) collapsed = collapsed.slice(1);
      if (collapsed === '') continue;
      raw.push(collapsed);
      rawEndsInSpace = collapsed.charCodeAt(collapsed.length - 1) === 0x20;
    }
  };
  /** Ends the text node read so far (with a lexicon): rewritten and added to the span. */
  const endText = (): void => {
    if (raw.length === 0) return;
    let text = raw.length === 1 ? raw[0]! : raw.join('');
    raw = [];
    rawEndsInSpace = false;
    if (text.trim() === '') {
      spanText(text);
      mapPart(text);
      return;
    }
    const out = rewrite!(text, languageOf(top()));
    if (typeof out === 'string') {
      spanText(out);
      mapPart(out, true);
    } else {
      spanText(out.text);
      mapPart(out);
    }
  };
  /** Ends the span being built (its settings are the top frame's): a new span starts at the next text. */
  const endSpan = (): void => {
    collapsed.end();
    const written = parts !== null && rewritten && spans.openTextBytes > 0 ? writtenSpan(parts, spans.openText()) : undefined;
    parts = [];
    partUnits = 0;
    rewritten = false;
    if (spans.openTextBytes === 0) return;
    const frame = top();
    const neutral = frame.voice === undefined && frame.language === undefined && frame.rate === 1 && frame.gainDb === 0;
    const starts = pendingSentence || lastTail === '';
    const span = spans.endSpan({
      newSentence: starts,
      settings: neutral
        ? undefined
        : (frame.record.at ??= spans.settings({
            voice: frame.voice,
            language: frame.language,
            rate: frame.rate !== 1 ? frame.rate : undefined,
            gainDb: frame.gainDb !== 0 ? frame.gainDb : undefined,
          })),
      breakBeforeMs: pendingBreak,
      written,
    });
    // A new sentence where the text's own sentence ends (UAX #29) between the last span and this one.
    if (!starts) joins.push({ span, join: [`${lastTail} `, head] });
    if (joins.length >= 256) settleJoins();
    pendingBreak = undefined;
    pendingSentence = false;
    lastTail = tail;
    head = '';
    tail = '';
  };
  const sentenceBoundary = (): void => {
    endSpan();
    pendingSentence = true;
  };

  /** Text between tags (a part of it, when it is taken from the parser as it grows: see `drain`). */
  const onText = (text: string): void => {
    if (stack.length === 0) {
      if (text.trim() !== '') fail('text outside <speak>');
      return;
    }
    takeText(text);
  };
  parser.on('doctype', () => fail('a DOCTYPE is not allowed in SSML (no DTD is read and no entity is defined)', undefined, 'remove the <!DOCTYPE …> declaration'));
  parser.on('text', onText);
  parser.on('cdata', takeText);
  /** Where the start tag being read begins (its '<'), 1-based. */
  let tagAt = { line: 1, column: 1 };
  /** The start tag being read: its name, and the characters of its attribute values read so far. */
  let tagName = '';
  let attributeChars = 0;
  parser.on('opentagstart', (tag) => {
    // saxes is just past the name here: the '<' is the name's length and one before.
    tagAt = { line: parser.line, column: Math.max(1, parser.column - tag.name.length - 1) };
    tagName = tag.name;
    attributeChars = 0;
  });
  /** @throws TtsError `usage` when the tag's attribute values (and `reading`, a value not read to its end) are too long. */
  const checkAttributes = (reading = 0): void => {
    if (attributeChars + reading <= SSML_MAX_ATTRIBUTE_CHARS) return;
    fail(`<${quoteInput(tagName)}> has attribute values longer than ${SSML_MAX_ATTRIBUTE_CHARS.toLocaleString('en')} characters`, tagAt, "an SSML attribute is a name, a time or a short text: put long text in the element's content");
  };
  parser.on('attribute', (attribute) => {
    attributeChars += attribute.value.length;
    checkAttributes();
  });
  parser.on('opentag', (tag) => {
    const at = tagAt;
    if (stack.length >= SSML_MAX_DEPTH) fail(`elements nested deeper than ${SSML_MAX_DEPTH}`, at);
    if (stack.length === 0) {
      if (sawRoot || tag.name !== 'speak') fail(sawRoot ? 'a second root element after </speak>' : `the root element is <${quoteInput(tag.name)}>, not <speak>`, at);
      sawRoot = true;
    }
    const parent = stack[stack.length - 1];
    if (parent?.collect !== undefined) fail(`<${parent.collect.kind}> holds text only, not <${quoteInput(tag.name)}>`, at);
    if (parent !== undefined) endText();
    // Written out, not `{ ...parent }`: V8 kept the spread copies past the young generation's
    // collections, and a document of tiny elements grew the old one by 50 MB of them.
    const frame: Frame =
      parent === undefined
        ? { name: tag.name, voice: undefined, language: undefined, rate: 1, gainDb: 0, record: {}, collect: undefined }
        : { name: tag.name, voice: parent.voice, language: parent.language, rate: parent.rate, gainDb: parent.gainDb, record: parent.record, collect: undefined };
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
        if (level === undefined) fail(`emphasis level="${quoteInput(attrs.get('level') ?? '')}" is not one of ${Object.keys(EMPHASIS_LEVELS).join(', ')}`, at);
        frame.rate = clampRate(frame.rate * level!.rate, at);
        frame.gainDb += level!.gainDb;
        break;
      }
      case 'voice': {
        attrs.allow('name');
        const name = attrs.require('name');
        if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/u.test(name)) fail(`voice name="${quoteInput(name)}" is not a voice id`, at);
        endSpan();
        frame.voice = spans.name(name);
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
        if (!(SAY_AS_KINDS as readonly string[]).includes(as)) fail(`say-as interpret-as="${quoteInput(as)}" is not one of ${SAY_AS_KINDS.join(', ')}`, at);
        frame.collect = { kind: 'say-as', as: as as SayAsKind, format: attrs.get('format'), text: [], units: 0, at };
        break;
      }
      case 'mark': {
        attrs.allow('name');
        const name = attrs.require('name');
        endSpan();
        spans.addMark(name);
        break;
      }
      case 'audio':
        if (!options.lenient) fail('<audio> is not supported: tts fetches no audio', at, 'remove it, or give --ssml-lenient to speak its text content instead');
        break;
      default:
        if (!options.lenient) fail(`<${quoteInput(tag.name)}> is not an SSML element tts reads`, at, 'see docs/cli.md §11.1 for the elements read, or give --ssml-lenient to speak its text content');
    }
    // A new settings record only where the settings change: the spans of `<s>`, `<mark>`… share their parent's.
    if (parent !== undefined && (frame.voice !== parent.voice || frame.language !== parent.language || frame.rate !== parent.rate || frame.gainDb !== parent.gainDb)) frame.record = {};
    stack.push(frame);
  });
  parser.on('closetag', (tag) => {
    endText();
    const frame = top();
    // Replacements go in as written: the text around them has its own spaces (or none, in Japanese).
    if (frame.collect?.kind === 'sub') {
      spanText(frame.collect.alias);
      mapPart(frame.collect.alias);
    }
    else if (frame.collect?.kind === 'say-as') {
      try {
        const { as, format } = frame.collect;
        const content = collapseWhitespace(frame.collect.text.join('')).trim();
        const language = languageOf(frame);
        const text = renderSayAs(as, format, content, language);
        mapPart(text);
        const record = sayAsRecord(as, format, content, language);
        // A text longer than what it is made from (`W` → ダブリュー, 18 bytes for 1) is kept as that,
        // and made again when the span is read. It is written as it is: its white space is one space
        // at most, none at its ends.
        if (Buffer.byteLength(text) > record.length + 8 && text === collapseRuns(text).trim()) {
          collapsed.addWhole(text, () => {
            spans.appendMade(record, text);
            track(text);
          });
        } else spanText(text);
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

  /**
   * saxes holds the text of a text node (a CDATA section, a comment, a DOCTYPE) until it ends,
   * grown a line or an entity at a time: a string and a rope node each, some 80 bytes for every
   * line of `Hello.` (16 MB of short lines: 540 MB; of `a &amp; `: 610 MB). After each block the
   * text of a text node or CDATA section read so far is taken from it and handled as text comes,
   * and that of a comment or DOCTYPE dropped (tts reads neither). An attribute value being read is
   * measured: too long, it is refused before it is read to its end (see {@link SSML_MAX_ATTRIBUTE_CHARS}).
   */
  const drain = (): void => {
    const inner = parser as unknown as { state?: unknown; text?: unknown };
    const text = inner.text;
    if (SAXES_STATES === undefined || typeof text !== 'string' || text.length <= 1) return;
    if (inner.state === SAXES_STATES.text) {
      inner.text = '';
      onText(text);
    } else if (inner.state === SAXES_STATES.cdata) {
      inner.text = '';
      takeText(text);
    } else if (inner.state === SAXES_STATES.attribute) checkAttributes(text.length);
    else if (SAXES_STATES.skipped.has(inner.state)) inner.text = text.slice(-1);
  };

  try {
    for await (const block of blocks) {
      parser.write(block);
      drain();
    }
    parser.close();
  } catch (error) {
    if (error instanceof TtsError) throw error;
    // saxes says "line:column: what" for malformed XML.
    const message = error instanceof Error ? error.message : String(error);
    const m = /^(\d+:\d+): (.*)$/su.exec(message);
    throw new TtsError('usage', `${options.source}:${m?.[1] ?? `${parser.line}:${parser.column}`}: malformed SSML: ${saxesMessage(m?.[2] ?? message)}`, {
      hint: 'check the markup (every element closed, & written &amp;)',
    });
  }
  settleJoins();
  if (!sawRoot) throw new TtsError('usage', `${options.source}: no <speak> element`, { hint: 'SSML is one <speak>…</speak> document' });
  if (pendingBreak !== undefined || spans.openMarks > 0) spans.endSpan({ breakBeforeMs: pendingBreak });
  if (spans.textBytes === 0) throw new TtsError('usage', `${options.source}: the SSML has no text to speak`, { hint: 'put some text inside <speak>' });
  return spans;

  /** The attributes of one start tag, checked against what its element takes. */
  function attributes(tag: SaxesTagPlain, at: { line: number; column: number }): TagAttributes {
    return new TagAttributes(tag, at, options.lenient, fail);
  }

  function lang(value: string | undefined, at: { line: number; column: number }): Language | undefined {
    if (value === undefined) return undefined;
    const primary = value.trim().toLowerCase().split(/[-_]/u)[0] as Language;
    if (!(LANGUAGES as readonly string[]).includes(primary)) return fail(`xml:lang="${quoteInput(value)}": tts speaks ${LANGUAGES.join(' and ')}`, at);
    return primary;
  }

  function breakMs(time: string | undefined, strength: string | undefined, at: { line: number; column: number }): number {
    if (time !== undefined) {
      const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s)\s*$/u.exec(time);
      if (m === null) return fail(`break time="${quoteInput(time)}" is not a duration such as 500ms or 1.5s`, at);
      const ms = Number(m[1]) * (m[2] === 's' ? 1000 : 1);
      if (ms > SSML_MAX_BREAK_MS) return fail(`break time="${quoteInput(time)}" is longer than ${SSML_MAX_BREAK_MS / 1000} s`, at);
      return Math.round(ms);
    }
    const ms = BREAK_STRENGTH_MS[strength ?? 'medium'];
    if (ms === undefined) return fail(`break strength="${quoteInput(strength ?? '')}" is not one of ${Object.keys(BREAK_STRENGTH_MS).join(', ')}`, at);
    return ms;
  }

  function rateOf(value: string, at: { line: number; column: number }): number {
    const named = RATE_NAMES[value.trim()];
    if (named !== undefined) return named;
    // "150%" is 1.5 times the rate; "+20%"/"-20%" change it by that much (SSML 1.0's relative form).
    const m = /^\s*([+-]?)(\d+(?:\.\d+)?)%\s*$/u.exec(value);
    if (m === null) return fail(`prosody rate="${quoteInput(value)}" is not a percentage (150%, +20%) or one of ${Object.keys(RATE_NAMES).join(', ')}`, at);
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
    if (m === null) return fail(`prosody volume="${quoteInput(value)}" is not in dB (+6dB, -3dB) or one of ${Object.keys(VOLUME_NAMES).join(', ')}`, at);
    const db = Number(m[1]);
    if (db > 20) return fail(`prosody volume="${quoteInput(value)}" is louder than +20dB`, at);
    return db;
  }
}
