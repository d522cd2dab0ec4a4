/**
 * SSML → speech spans (text/ssml.ts, docs/cli.md §11.1): our own documents in the shapes of the
 * W3C SSML 1.1 §2–§3 examples, each giving the spans (what is requested, in which voice and
 * language, with which rate, gain, break and marks); and hostile documents refused with exit 2
 * and their line:column.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TtsError } from '../../src/errors.js';
import { SAXES_TEXT_TAKEN, SSML_MAX_ATTRIBUTE_CHARS, ssmlSpans, type SsmlOptions } from '../../src/text/ssml.js';
import { looksLikeSsml } from '../../src/cli/ssml-input.js';
import { compileMappedLexicon, mapWithin, MAX_MAPPED_TEXT_UNITS, parseLexicon } from '../../src/text/lexicon.js';
import type { SpeechSpan } from '../../src/text/spans.js';

const read = async (doc: string, extra: Partial<SsmlOptions> = {}): Promise<SpeechSpan[]> => [...(await ssmlSpans([doc], { language: 'en', lenient: false, source: 'doc.ssml', ...extra }))];

/** Rejects with a usage error (exit 2) whose message matches `pattern`. */
async function refused(doc: string | string[], pattern: RegExp, extra: Partial<SsmlOptions> = {}): Promise<void> {
  await assert.rejects(ssmlSpans(typeof doc === 'string' ? [doc] : doc, { language: 'en', lenient: false, source: 'doc.ssml', ...extra }), (error: unknown) => {
    assert.ok(error instanceof TtsError, String(error));
    assert.equal(error.exitCode, 2);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('SSML shapes (W3C SSML 1.1 §2–§3)', () => {
  it('§2.1 a document: speak with version, namespace and xml:lang; p and s are sentences', async () => {
    const spans = await read(
      '<?xml version="1.0"?>\n<speak version="1.1" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en-GB">\n  <p><s>The ferry is late</s><s>Please wait inside</s></p>\n  <p>Tickets are sold at the kiosk.</p>\n</speak>',
    );
    assert.deepEqual(spans, [
      { text: 'The ferry is late', newSentence: true, language: 'en' },
      { text: 'Please wait inside', newSentence: true, language: 'en' },
      { text: 'Tickets are sold at the kiosk.', newSentence: true, language: 'en' },
    ]);
  });

  it('§3.1.8 lang (and a voice of another language): each its own span in its language, the text after back in the first', async () => {
    const spans = await read('<speak>The sign says <lang xml:lang="ja">出口</lang> in Japanese, and <voice name="ja-man-1">ありがとう</voice> too.</speak>');
    assert.deepEqual(
      spans.map((s) => [s.text, s.voice, s.language]),
      [
        ['The sign says', undefined, undefined],
        ['出口', undefined, 'ja'],
        ['in Japanese, and', undefined, undefined],
        ['ありがとう', 'ja-man-1', 'ja'],
        ['too.', undefined, undefined],
      ],
    );
    assert.deepEqual(
      spans.map((s) => s.newSentence),
      [true, false, false, false, false],
    );
  });

  it('§3.1.9 say-as and §3.1.10 sub: rendered before the request, in the text around them', async () => {
    const spans = await read(
      '<speak>Call <say-as interpret-as="telephone">555-0142</say-as> before <say-as interpret-as="date" format="mdy">7/4/2026</say-as> at <say-as interpret-as="time">9:05</say-as>, ask for <sub alias="the Acme Corporation">ACME</sub>, code <say-as interpret-as="characters">QX7</say-as>, room <say-as interpret-as="cardinal">1,204</say-as>, pin <say-as interpret-as="digits">908</say-as>.</speak>',
    );
    assert.deepEqual(spans, [
      {
        text: 'Call five five five, zero one four two before July fourth, twenty twenty-six at nine oh five A M, ask for the Acme Corporation, code Q X seven, room one thousand two hundred four, pin nine zero eight.',
        newSentence: true,
      },
    ]);
  });

  it('a say-as whose text is longer than its content is kept as the content and rendered again when read: the same spans', async () => {
    const letters = 'WQX'.repeat(1000);
    const spans = await read(`<speak xml:lang="ja">コード <say-as interpret-as="characters">${letters}</say-as> です。<break/><say-as interpret-as="digits">${'7'.repeat(500)}</say-as></speak>`);
    const names: Record<string, string> = { W: 'ダブリュー', Q: 'キュー', X: 'エックス' };
    assert.deepEqual(spans, [
      { text: `コード ${[...letters].map((c) => names[c]).join('、')} です。`, newSentence: true, language: 'ja' },
      { text: 'ナナ'.repeat(500), newSentence: true, language: 'ja', breakBeforeMs: 500 },
    ]);
  });

  it('say-as in Japanese reads numbers with their counters in katakana', async () => {
    const spans = await read('<speak xml:lang="ja"><say-as interpret-as="date" format="md">4/1</say-as>の<say-as interpret-as="time">14:30</say-as>に<say-as interpret-as="cardinal">300</say-as>人。</speak>');
    assert.equal(spans[0]!.text, 'シガツツイタチのジューヨジサンジュップンにサンビャク人。');
  });

  it('§3.2.1 voice: a change of voice is a span of its own; nested voices restore the outer one', async () => {
    const spans = await read('<speak><voice name="en-woman-1">Good evening. <voice name="en-man-1">And good night.</voice> Sleep well.</voice></speak>');
    assert.deepEqual(
      spans.map((s) => [s.text, s.voice, s.newSentence]),
      [
        ['Good evening.', 'en-woman-1', true],
        ['And good night.', 'en-man-1', true],
        ['Sleep well.', 'en-woman-1', true],
      ],
    );
  });

  it('§3.2.2 emphasis: documented rate and gain; none changes nothing', async () => {
    const spans = await read('<speak>This is <emphasis>very</emphasis> <emphasis level="strong">very</emphasis> <emphasis level="reduced">rarely</emphasis> <emphasis level="none">said</emphasis>.</speak>');
    assert.deepEqual(
      spans.map((s) => [s.text, s.rate, s.gainDb]),
      [
        ['This is', undefined, undefined],
        ['very', 0.92, 2],
        ['very', 0.85, 4],
        ['rarely', 1.08, -3],
        ['said', undefined, undefined],
        ['.', undefined, undefined],
      ],
    );
  });

  it('§3.2.3 break: time in ms or s, strengths mapped, consecutive breaks add up, the break rides on the next span; a trailing break is a span with no text', async () => {
    const spans = await read(
      '<speak>One<break time="1.5s"/>two<break time="250ms"/><break strength="x-weak"/>three<break/>four<break strength="none"/>five<break strength="x-strong"/></speak>',
    );
    assert.deepEqual(
      spans.map((s) => [s.text, s.breakBeforeMs]),
      [
        ['One', undefined],
        ['two', 1500],
        ['three', 350],
        ['four', 500],
        ['five', 0],
        ['', 1200],
      ],
    );
  });

  it('§3.2.4 prosody: rate as % (absolute and relative) and names; volume in dB and names; nested prosody multiplies rates and adds dB', async () => {
    const spans = await read(
      '<speak><prosody rate="x-slow">a</prosody><prosody rate="150%">b</prosody><prosody rate="+20%">c</prosody><prosody rate="-50%" volume="x-loud">d<prosody rate="x-fast" volume="-4dB">e</prosody></prosody><prosody volume="silent">f</prosody><prosody volume="soft">g</prosody></speak>',
    );
    assert.deepEqual(
      spans.map((s) => [s.text, s.rate, s.gainDb]),
      [
        ['a', 0.5, undefined],
        ['b', 1.5, undefined],
        ['c', 1.2, undefined],
        ['d', 0.5, 10],
        ['e', 0.75, 6],
        ['f', undefined, -Infinity],
        ['g', undefined, -6],
      ],
    );
  });

  it('§3.3.2 mark: the name rides on the span that follows it, the text around it split there', async () => {
    const spans = await read('<speak>Ready <mark name="go"/>set <mark name="a"/><mark name="b"/>go<mark name="end"/></speak>');
    assert.deepEqual(
      spans.map((s) => [s.text, s.marks]),
      [
        ['Ready', undefined],
        ['set', ['go']],
        ['go', ['a', 'b']],
        ['', ['end']],
      ],
    );
  });

  it('a rewrite (the lexicon) sees plain text nodes with their language, never a sub alias or say-as output', async () => {
    const seen: [string, string][] = [];
    const spans = await read('<speak>SQL and <sub alias="SQL">S.Q.L.</sub> and <say-as interpret-as="characters">SQL</say-as> <lang xml:lang="ja">SQL</lang></speak>', {
      rewrite: (text, language) => {
        seen.push([text, language]);
        return text.replace(/SQL/gu, 'sequel');
      },
    });
    assert.deepEqual(
      spans.map((s) => s.text),
      ['sequel and SQL and S Q L', 'sequel'],
    );
    assert.deepEqual(seen, [
      ['SQL and ', 'en'],
      [' and ', 'en'],
      ['SQL', 'ja'],
    ]);
  });

  it('a span the lexicon changed keeps its map to the text as written through the span list; a long one, or one given as text alone, keeps none', async () => {
    const lexicon = compileMappedLexicon(await parseLexicon('[en]\n"SQL" = "structured query language"\n"Kubernetes" = "K"\n', 'lexicon.toml'));
    const spans = await read('<speak><s>Use   <emphasis>SQL</emphasis> now, <sub alias="K">X</sub>.</s><s>Kubernetes\n and SQL.</s><s>Nothing here.</s></speak>', { rewrite: mapWithin(lexicon) });
    assert.deepEqual(
      spans.map((s) => [s.text, s.written?.source, s.written?.text]),
      [
        ['Use', undefined, undefined],
        ['structured query language', 'SQL', 'structured query language'],
        ['now, K.', undefined, undefined],
        ['K and structured query language.', 'Kubernetes and SQL.', 'K and structured query language.'],
        ['Nothing here.', undefined, undefined],
      ],
    );
    // Past the length whose map is kept (text/lexicon.ts MAX_MAPPED_TEXT_UNITS): the text as sent alone.
    const long = await read(`<speak>${'SQL here. '.repeat(MAX_MAPPED_TEXT_UNITS / 8)}</speak>`, { rewrite: mapWithin(lexicon) });
    assert.equal(long.length, 1);
    assert.equal(long[0]!.written, undefined);
    assert.ok(long[0]!.text.startsWith('structured query language here. structured'));
    // A rewrite that gives a text alone: no map.
    const plain = await read('<speak>SQL here.</speak>', { rewrite: (t) => t.replace('SQL', 'sequel') });
    assert.deepEqual(plain.map((s) => [s.text, s.written]), [['sequel here.', undefined]]);
  });

  it('a text node split across blocks reaches the rewrite whole', async () => {
    const seen: string[] = [];
    await ssmlSpans(['<speak>Structured Qu', 'ery Language</speak>'], { language: 'en', lenient: false, source: 'x', rewrite: (t) => (seen.push(t), t) });
    assert.deepEqual(seen, ['Structured Query Language']);
  });

  it('looksLikeSsml: <speak at the start, after a BOM, white space or an XML declaration', () => {
    assert.ok(looksLikeSsml('<speak>hi</speak>'));
    assert.ok(looksLikeSsml('\uFEFF  <?xml version="1.0"?>\n<speak version="1.1">'));
    assert.ok(!looksLikeSsml('Say <speak> aloud'));
    assert.ok(!looksLikeSsml('<speaker>'));
  });

  it('looksLikeSsml: and after comments and a document type declaration, as an XML prolog has them (the DOCTYPE is then refused)', async () => {
    assert.ok(looksLikeSsml('<!-- made by a tool -->\n<speak>hi</speak>'));
    assert.ok(looksLikeSsml('<?xml version="1.0"?>\n<!-- a -->\n<!-- b -->\n<speak>hi</speak>'));
    assert.ok(looksLikeSsml('<?xml version="1.0"?><!DOCTYPE speak PUBLIC "-//W3C//DTD SYNTHESIS 1.0//EN" "synthesis.dtd"><speak>hi</speak>'));
    assert.ok(looksLikeSsml('<!DOCTYPE speak [<!ENTITY a "x">]>\n<speak>&a;</speak>'));
    assert.ok(!looksLikeSsml('<!-- a note --> hello <speak>'));
    assert.ok(!looksLikeSsml('<!-- never closed <speak>'));
    await refused('<?xml version="1.0"?><!DOCTYPE speak [<!ENTITY a "x">]><speak>&a;</speak>', /DOCTYPE/);
  });
});

describe('SSML refused (exit 2, line:column)', () => {
  it('an unknown element names itself and where its tag starts', async () => {
    await refused('<speak>\n  Hello <whisper>there</whisper></speak>', /^doc\.ssml:2:9: <whisper> is not an SSML element tts reads$/);
  });

  it('--ssml-lenient speaks an unknown element\'s text, and audio\'s fallback text, and ignores unknown attributes', async () => {
    const spans = await read('<speak>Hello <whisper>there</whisper> <audio src="bell.wav">ding</audio> <prosody pitch="high">up</prosody></speak>', { lenient: true });
    assert.deepEqual(
      spans.map((s) => s.text),
      ['Hello there ding', 'up'],
    );
  });

  it('audio is refused clearly: tts fetches nothing', async () => {
    await refused('<speak><audio src="https://example.invalid/a.wav"/></speak>', /1:8: <audio> is not supported: tts fetches no audio/);
  });

  it('an unsupported attribute, a bad value, a missing attribute', async () => {
    await refused('<speak><prosody pitch="high">x</prosody></speak>', /1:8: <prosody> attribute pitch is not supported/);
    await refused('<speak><prosody rate="fastest">x</prosody></speak>', /prosody rate="fastest" is not a percentage/);
    await refused('<speak><prosody rate="1000%">x</prosody></speak>', /prosody rate 1000% is outside 25% … 400%/);
    await refused('<speak><break time="2 minutes"/>x</speak>', /break time="2 minutes" is not a duration/);
    await refused('<speak><break time="61s"/>x</speak>', /longer than 60 s/);
    await refused('<speak><voice>x</voice></speak>', /<voice> needs a name="…" attribute/);
    await refused('<speak><lang xml:lang="fr">bonjour</lang></speak>', /xml:lang="fr": tts speaks ja and en/);
    await refused('<speak><say-as interpret-as="date" format="mdy">13/40/2020</say-as></speak>', /1:8: say-as date: month 13/);
    await refused('<speak><say-as interpret-as="ordinal">3</say-as></speak>', /say-as interpret-as="ordinal" is not one of/);
    await refused(`<speak>\n  <say-as interpret-as="digits">${'7'.repeat(10_001)}</say-as></speak>`, /^doc\.ssml:2:3: say-as digits: "7{40}…" is longer than 10,000 characters$/);
    await refused('<speak><sub alias="x"><s>y</s></sub></speak>', /<sub> holds text only, not <s>/);
  });

  it('malformed XML says where', async () => {
    await refused('<speak>\nHello <s>there</speak>', /^doc\.ssml:2:22: malformed SSML: unexpected close tag/);
    await refused('<speak>Fish & chips</speak>', /^doc\.ssml:1:\d+: malformed SSML: /);
  });

  it('a root other than speak, text outside it, no speak at all, nothing to say', async () => {
    await refused('<p>Hello</p>', /the root element is <p>, not <speak>/);
    await refused('<speak>a</speak>b', /text outside <speak>|malformed SSML/);
    await refused('<speak><break time="1s"/><mark name="m"/></speak>', /the SSML has no text to speak/);
  });

  it('billion laughs: the DOCTYPE is refused before any entity is defined', async () => {
    const lol = ['<?xml version="1.0"?>', '<!DOCTYPE speak [', ' <!ENTITY lol "lol">'];
    for (let i = 1; i <= 9; i++) lol.push(` <!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`);
    lol.push(']>', '<speak>&lol9;</speak>');
    await refused(lol.join('\n'), /^doc\.ssml:13:2: a DOCTYPE is not allowed in SSML/);
  });

  it('an external entity: the DOCTYPE is refused; an entity without one is undefined', async () => {
    await refused('<?xml version="1.0"?>\n<!DOCTYPE speak [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<speak>&xxe;</speak>', /a DOCTYPE is not allowed/);
    await refused('<speak>&xxe;</speak>', /1:12: malformed SSML: undefined entity/);
  });

  it(`attribute values of one tag are at most ${SSML_MAX_ATTRIBUTE_CHARS} characters in all (entities read), refused at the tag's start whatever the blocks`, async () => {
    assert.equal(SSML_MAX_ATTRIBUTE_CHARS, 1024 * 1024);
    const half = 'a\n'.repeat(SSML_MAX_ATTRIBUTE_CHARS / 4);
    // Two values of half the limit each, one of them of entities: read.
    const spans = await read(`<speak><mark name="${half}" x="${'&amp;'.repeat(SSML_MAX_ATTRIBUTE_CHARS / 2)}"/>w</speak>`, { lenient: true });
    assert.equal(spans[0]!.marks![0]!, half.replaceAll('\n', ' ').trim());
    for (const doc of [`<speak>\n <sub alias="${half}${half}b">x</sub></speak>`, `<speak>\n <sub x='${half}' alias="${half}&#x41;">x</sub></speak>`]) {
      for (const size of [doc.length, 65_536, 1000]) {
        const blocks = Array.from({ length: Math.ceil(doc.length / size) }, (_, i) => doc.slice(i * size, (i + 1) * size));
        await refused(blocks, /^doc\.ssml:2:2: <sub> has attribute values longer than 1,048,576 characters$/, { lenient: true });
      }
    }
  });

  it('say-as content over 10,000 characters is refused as soon as it is read, as its end would refuse it; white space does not count', async () => {
    // Never closed: refused for its length before the document's end is reached.
    await refused(`<speak>\n  <say-as interpret-as="digits">${'12 \n'.repeat(100_000)}`, /^doc\.ssml:2:3: say-as digits: "(12 ){13}1…" is longer than 10,000 characters$/);
    const spans = await read(`<speak><say-as interpret-as="digits">${' \n\t'.repeat(200_000)}${'7 '.repeat(5_000)}${' '.repeat(200_000)}</say-as></speak>`);
    assert.equal(spans[0]!.text, Array(5_000).fill('seven').join(' '));
  });

  it('a message quotes at most the first 60 characters of what the document holds, then …, its control and bidirectional characters escaped', async () => {
    const big = 'y'.repeat(1_000_000);
    const quoted = `${'y'.repeat(60)}…`;
    for (const [doc, pattern, lenient] of [
      [`<speak><${big}>hi</${big}></speak>`, `^doc\\.ssml:1:8: <${quoted}> is not an SSML element tts reads$`, false],
      [`<${big}>hi</${big}>`, `^doc\\.ssml:1:1: the root element is <${quoted}>, not <speak>$`, false],
      [`<speak><s ${big}="1">hi</s></speak>`, `^doc\\.ssml:1:8: <s> attribute ${quoted} is not supported$`, false],
      [`<speak><voice name="${big}">hi</voice></speak>`, `^doc\\.ssml:1:8: voice name="${quoted}" is not a voice id$`, false],
      [`<speak><say-as interpret-as="${big}">1</say-as></speak>`, `^doc\\.ssml:1:8: say-as interpret-as="${quoted}" is not one of `, false],
      [`<speak><say-as interpret-as="date" format="${big}">1</say-as></speak>`, `^doc\\.ssml:1:8: say-as date: format "${quoted}" is not one of `, false],
      [`<speak><say-as interpret-as="time" format="${big}">1:00</say-as></speak>`, `^doc\\.ssml:1:8: say-as time: format "${quoted}" is not hms12 or hms24$`, false],
      [`<speak><lang xml:lang="${big}">hi</lang></speak>`, `^doc\\.ssml:1:8: xml:lang="${quoted}": tts speaks ja and en$`, false],
      [`<speak><break time="${big}"/>hi</speak>`, `^doc\\.ssml:1:8: break time="${quoted}" is not a duration`, false],
      [`<speak><break time="${'9'.repeat(100_000)}s"/>hi</speak>`, `^doc\\.ssml:1:8: break time="${'9'.repeat(60)}…" is longer than 60 s$`, false],
      [`<speak><break strength="${big}"/>hi</speak>`, `^doc\\.ssml:1:8: break strength="${quoted}" is not one of `, false],
      [`<speak><prosody rate="${big}">hi</prosody></speak>`, `^doc\\.ssml:1:8: prosody rate="${quoted}" is not a percentage`, false],
      [`<speak><prosody volume="${big}">hi</prosody></speak>`, `^doc\\.ssml:1:8: prosody volume="${quoted}" is not in dB`, false],
      [`<speak><prosody volume="+${'9'.repeat(100_000)}dB">hi</prosody></speak>`, `^doc\\.ssml:1:8: prosody volume="\\+${'9'.repeat(59)}…" is louder than \\+20dB$`, false],
      [`<speak><emphasis level="${big}">hi</emphasis></speak>`, `^doc\\.ssml:1:8: emphasis level="${quoted}" is not one of `, false],
      [`<speak><sub alias="x"><${big}>y</${big}></sub></speak>`, `^doc\\.ssml:1:23: <sub> holds text only, not <${quoted}>$`, true],
      [`<speak><${big} a="${'z'.repeat(SSML_MAX_ATTRIBUTE_CHARS + 1)}">hi</${big}></speak>`, `^doc\\.ssml:1:8: <${quoted}> has attribute values longer than`, true],
      // saxes's own messages quote names too.
      [`<speak><${big}>hi`, `^doc\\.ssml:1:\\d+: malformed SSML: unclosed tag: ${quoted}$`, true],
      [`<speak><s ${big}="1" ${big}="2">hi</s></speak>`, `^doc\\.ssml:1:\\d+: malformed SSML: duplicate attribute: ${quoted}$`, true],
    ] as const) {
      await refused(doc, new RegExp(pattern, 'u'), { lenient });
    }
    // A name of 60 characters is quoted whole; pairs are not cut; C1 controls and bidirectional
    // overrides are escaped, as every text from outside is on stderr (cli/escape.ts).
    await refused(`<speak><voice name="${'v'.repeat(59)}!">hi</voice></speak>`, new RegExp(`voice name="${'v'.repeat(59)}!" is not a voice id$`, 'u'));
    await refused(`<speak><voice name="${'😀'.repeat(100)}">hi</voice></speak>`, new RegExp(`voice name="${'😀'.repeat(60)}…" is not a voice id$`, 'u'));
    await refused('<speak><voice name="\u202eevil\u009b2J\u2066">hi</voice></speak>', /voice name="\\u202eevil\\x9b2J\\u2066" is not a voice id$/u);
  });

  it('10,000 nested elements: refused at depth 64, without reading them all into a tree', async () => {
    const deep = `<speak>${'<prosody>'.repeat(10_000)}x${'</prosody>'.repeat(10_000)}</speak>`;
    await refused(deep, /^doc\.ssml:1:575: elements nested deeper than 64$/);
  });
});

describe('SSML read as it comes (saxes\'s text taken after every block, docs/cli.md §11 "Memory")', () => {
  it('saxes is the version whose private state and text text/ssml.ts reads, pinned exactly, and they have the shape it expects', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
    const installed = (createRequire(import.meta.url)('saxes/package.json') as { version: string }).version;
    assert.equal(manifest.dependencies.saxes, '6.0.0', 'package.json pins saxes exactly: text/ssml.ts reads its private fields (a new version may change them)');
    assert.equal(installed, manifest.dependencies.saxes, 'the saxes installed is the one package.json pins (npm install)');
    assert.ok(
      SAXES_TEXT_TAKEN,
      "saxes's private `state` and `text` are not what text/ssml.ts reads (SAXES_STATES): its text would be held whole until each text node ends, and a document of millions of lines in one text node would take gigabytes. Read saxes's source again and fix SAXES_STATES and drain(), or pin the saxes they were written for.",
    );
  });

  /** Text, white space and line breaks of several kinds, entities, emoji, Japanese, a long run. */
  const text = fc.array(fc.constantFrom('Hello', ' ', '  ', '\n', '\r\n', '\r', '\t', 'world.', 'e.g.', ' Mr. ', '😀', '東京です。', '&amp;', '&lt;', '&#x1F600;', '&#233;', ']', 'll', 'x'.repeat(40), '\u00a0'), { maxLength: 8 }).map((p) => p.join(''));
  const plain = fc.array(fc.constantFrom('Hello', ' ', '\n', 'world.', 'll', '東京', 'x'.repeat(40)), { maxLength: 4 }).map((p) => p.join(''));
  const letters = fc.array(fc.constantFrom('A', 'b', '1', ' ', '\n', 'W'), { minLength: 1, maxLength: 6 }).map((p) => `${p.join('')}Q`);
  const { node } = fc.letrec<{ node: string; children: string }>((tie) => ({
    children: fc.array(tie('node'), { maxLength: 5 }).map((c) => c.join('')),
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      text,
      plain.map((t) => `<![CDATA[${t}]]]]]>`),
      plain.map((t) => `<!--${t}-->`),
      plain.map((t) => `<?target ${t}?>`),
      fc.constantFrom('<break time="20ms"/>', '<break/>', '<mark name="a\nb"/>', '<mark name="m"/>'),
      plain.map((t) => `<sub alias="a &amp; b\nc">${t.replace(/\s+/g, ' ')}</sub>`),
      letters.map((t) => `<say-as interpret-as="characters">${t}</say-as>`),
      fc.tuple(fc.constantFrom('s', 'p', 'prosody rate="fast"', 'emphasis', 'voice name="ja-man-1"', 'lang xml:lang="en"', 'prosody volume="-3dB"'), tie('children')).map(([open, inner]) => `<${open}>${inner}</${open.split(' ')[0]}>`),
    ),
  }));
  const documents = fc.array(node, { minLength: 1, maxLength: 6 }).map((nodes) => `<?xml version="1.0"?>\n<!-- made by hand -->\n<speak>X ${nodes.join('')}</speak>\n`);
  /** `s` cut into blocks of `size` code units (one more where a surrogate pair would be cut). */
  const blocksOf = (s: string, size: number): string[] => {
    const blocks: string[] = [];
    for (let at = 0; at < s.length; ) {
      let end = Math.min(s.length, at + size);
      if (/[\udc00-\udfff]/.test(s[end] ?? '')) end++;
      blocks.push(s.slice(at, end));
      at = end;
    }
    return blocks;
  };
  /** The spans, or the refusal's message. */
  const spansOf = async (blocks: string[], rewrite: SsmlOptions['rewrite']): Promise<SpeechSpan[] | string> => {
    try {
      return [...(await ssmlSpans(blocks, { language: 'en', lenient: false, source: 'doc.ssml', rewrite }))];
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('gives the spans of the document written at once, whatever blocks it comes in (text nodes, CDATA, comments, processing instructions cut anywhere, down to every code unit), with a lexicon or without', async () => {
    await fc.assert(
      fc.asyncProperty(documents, fc.integer({ min: 1, max: 40 }), fc.boolean(), async (doc, size, lexicon) => {
        // A rewrite that sees where a text node was cut: `ll` across two parts would stay.
        const rewrite = lexicon ? (t: string): string => t.replaceAll('ll', 'L L') : undefined;
        assert.deepEqual(await spansOf(blocksOf(doc, size), rewrite), await spansOf([doc], rewrite));
      }),
      { numRuns: 300 },
    );
  });
});
