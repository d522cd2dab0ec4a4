/**
 * Japanese word timings from the built-in engine (issue 23 point 1; japanese-timings.ts,
 * japanese-words.ts): the words are kuromoji tokens of the text as written (auxiliaries joined
 * to the token before; ICU word segments for kana-only text), and their boundaries are eSpeak NG's
 * own phoneme events — checked against the events of the same kana spoken by EspeakSynth directly.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { createEngine, type EspeakEngine } from '../../src/engine/index.js';
import { EspeakSynth } from '../../src/engine/espeak.js';
import { containsKanji, loadTokenizer, speechSegments } from '../../src/engine/japanese.js';
import { japaneseTimings, phonemeKey, phonemeWords, type SegmentTiming } from '../../src/engine/japanese-timings.js';
import { espeakVoiceName } from '../../src/engine/voices.js';
import { EnergyEnvelope, speakableTokens, type EspeakPhonemeEvent } from '../../src/engine/word-timings.js';
import type { WordTiming } from '../../src/protocol/words.js';
import { job } from '../helpers/engine-audio.js';

let engine: EspeakEngine;
before(() => {
  engine = createEngine();
});
after(async () => {
  await engine.close();
});

/** Synthesizes `text` in Japanese at 22050 Hz (eSpeak's own rate: output frames are its samples). */
async function timed(text: string, voice: string): Promise<{ audio: Buffer; words: WordTiming[] }> {
  let words: WordTiming[] | undefined;
  const chunks: Buffer[] = [];
  for await (const c of engine.synthesize(job({ text, voice, sampleRate: 22050, language: 'ja' }), undefined, { wordTimings: true, onReport: (r) => (words = r.words) })) chunks.push(c);
  assert.ok(words !== undefined, 'the report has words');
  return { audio: Buffer.concat(chunks), words };
}

test('phonemeWords: a word runs from its first phoneme event to the event after its last', () => {
  // キョーワイイ as the events name it, then the clause's closing pause.
  const names = ['k', 'ʲ', 'ˌo̞', 'w', 'ä', 'ˌi', ''];
  const events: EspeakPhonemeEvent[] = names.map((phoneme, i) => ({ phoneme, sample: 1000 + i * 100 }));
  // The translator's phonemes of キョー, ワ, イイ (IPA, long vowels written out).
  const words = phonemeWords(events, [['kʲ', 'ˈo̞o̞'], ['w', 'ˈä'], ['ˈiː']], 5000);
  assert.deepEqual(words, [
    { token: 0, start: 1000, end: 1300 },
    { token: 1, start: 1300, end: 1500 },
    { token: 2, start: 1500, end: 1600 },
  ]);
  assert.equal(phonemeKey('ˈo̞o̞'), 'o');
  assert.equal(phonemeKey('kʲ'), 'k');
  // Nothing to align with: no words (the caller falls back), never invented ones.
  assert.deepEqual(phonemeWords([], [['k']], 100), []);
  assert.deepEqual(phonemeWords(events, [[], []], 5000), []);
});

test('phonemeWords: a word whose phoneme was said as one with its neighbour\'s shares that neighbour\'s time, cut at a phoneme event', () => {
  // お茶|を|大阪 said o tɕ ä o s ä k ä: を's o and 大阪's first one as one o, which the
  // alignment gives 大阪; を then takes its part of 大阪's time, up to the next phoneme event.
  const names = ['o̞', 'tɕ', 'ä', 'o̞', 's', 'ä', 'k', 'ä', ''];
  const events: EspeakPhonemeEvent[] = names.map((phoneme, i) => ({ phoneme, sample: i * 100 }));
  const words = phonemeWords(events, [['o̞', 'tɕ', 'ä'], ['o̞'], ['ˈo̞o̞', 's', 'ä', 'k', 'ä']], 900);
  assert.deepEqual(words, [
    { token: 0, start: 0, end: 300 },
    { token: 1, start: 300, end: 400 },
    { token: 2, start: 400, end: 800 },
  ]);
  // The last word untimed: the word before shares its time.
  const last = phonemeWords([{ phoneme: 'k', sample: 0 }, { phoneme: 'ä', sample: 100 }, { phoneme: '', sample: 200 }], [['k', 'ä'], ['x']], 200);
  assert.deepEqual(last, [
    { token: 0, start: 0, end: 100 },
    { token: 1, start: 100, end: 200 },
  ]);
});

/** Texts and the words expected in them: kanji, kana only, numbers with counters, Latin inside. */
const CASES: readonly (readonly [string, readonly string[]])[] = [
  ['今日はいい天気ですね。', ['今日', 'は', 'いい', '天気です', 'ね']],
  ['きょうはいいてんきですね。', ['きょう', 'は', 'いい', 'てんき', 'です', 'ね']],
  ['3月14日に5kmを走った。', ['3', '月', '14', '日', 'に', '5', 'km', 'を', '走った']],
  ['東京でPythonを書きました。', ['東京', 'で', 'Python', 'を', '書きました']],
  // An unknown word (no IPADIC entry: its kanji read one by one) and 々 repeating a kanji.
  ['魑魅魍魎が跋扈する。人々は朝ご飯を食べた。', ['魑魅魍魎', 'が', '跋扈', 'する', '人々', 'は', '朝', 'ご飯', 'を', '食べた']],
];

for (const voice of ['ja-man-1', 'ja-woman-1']) {
  test(`${voice}: one word per token, in order, inside the audio, boundaries at eSpeak NG's phoneme events`, async () => {
    const es = await EspeakSynth.create();
    for (const [text, expected] of CASES) {
      const { audio, words } = await timed(text, voice);
      assert.deepEqual(
        words.map((w) => w.text),
        expected,
      );
      const frames = audio.length / 2;
      words.forEach((w, i) => {
        assert.equal(w.text, text.slice(w.charStart, w.charEnd));
        assert.ok(w.start < w.end && w.end <= frames, `${w.text}: ${w.start}–${w.end} inside ${frames} frames`);
        if (i > 0) assert.ok(words[i - 1]!.end <= w.start, `${w.text} after ${words[i - 1]!.text}`);
      });
      // The engine's events for the Japanese segments, each spoken alone from a fresh state.
      const segments = await speechSegments(text, 'ja');
      // Latin inside makes several segments: its first is checked in the next test.
      if (/[A-Za-z]/.test(text)) continue;
      assert.equal(segments.length, 1, `${text}: one Japanese segment`);
      const events: number[] = [];
      es.reset();
      let total = 0;
      es.synthesize(
        espeakVoiceName(voice, 'ja'),
        segments[0]!.text,
        (block) => {
          total += block.length;
          return false;
        },
        undefined,
        (e) => events.push(e.sample),
      );
      assert.equal(total, frames, 'the job is that segment alone, sample for sample');
      const at = new Set([...events, total]);
      for (const w of words) {
        assert.ok(at.has(w.start), `${w.text} starts at ${w.start}, a phoneme event (${[...at].join(' ')})`);
        assert.ok(at.has(w.end), `${w.text} ends at ${w.end}, a phoneme event`);
      }
    }
  });
}

test('kanji numerals read by the number reader are timed as said: the words around them end where the kana ones do', async () => {
  // 二十歳 is said ハタチ and 二人 フタリ (japanese-numbers.ts), not as IPADIC reads their tokens
  // (ニ|ジュー|サイ, ニ|ニン): the same audio as the kana text, so the words after the numbers have
  // the kana text's boundaries.
  const kanji = await timed('二十歳の二人が来た。', 'ja-man-1');
  const kana = await timed('ハタチのフタリがきた。', 'ja-man-1');
  assert.ok(kanji.audio.equals(kana.audio), 'the same speech');
  const at = (words: readonly WordTiming[], text: string): [number, number] => {
    const w = words.find((x) => x.text === text);
    assert.ok(w !== undefined, text);
    return [w.start, w.end];
  };
  assert.deepEqual(at(kanji.words, 'の'), at(kana.words, 'の'));
  assert.deepEqual(at(kanji.words, 'が'), at(kana.words, 'が'));
  assert.deepEqual(at(kanji.words, '来た'), at(kana.words, 'きた'));
  // Still one word per token, the number's tokens sharing its reading in order.
  assert.deepEqual(kanji.words.map((w) => w.text), ['二', '十', '歳', 'の', '二', '人', 'が', '来た']);
  assert.equal(kanji.words[0]!.start, kana.words[0]!.start);
  assert.equal(kanji.words[2]!.end, kana.words[0]!.end);
});

test('numbers in digits are timed as said too: every token of 1月5日 is a word, with the kana text\'s outer boundaries', async () => {
  // 1月5日 is said イチガツイツカ (japanese-numbers.ts readNumbers), not as IPADIC reads its tokens
  // (1|ツキ|5|ニチ): before, the 5 found no phonemes of its own and was left out. Kana-only text
  // with digits (no kuromoji) takes the same readings.
  const digits = await timed('今日は5日です。1月5日。', 'ja-woman-1');
  const kana = await timed('キョーワイツカデス。イチガツイツカ。', 'ja-woman-1');
  assert.ok(digits.audio.equals(kana.audio), 'the same speech');
  assert.deepEqual(digits.words.map((w) => w.text), ['今日', 'は', '5', '日です', '1', '月', '5', '日']);
  const number = digits.words.slice(4);
  for (let i = 1; i < number.length; i++) assert.ok(number[i]!.start >= number[i - 1]!.end && number[i]!.end > number[i]!.start, JSON.stringify(number));
  assert.equal(number.at(-1)!.end, kana.words.at(-1)!.end, 'the number ends where the kana text does');
  const kanaOnly = await timed('ごがつに5さいになる。', 'ja-woman-1');
  assert.ok(kanaOnly.words.some((w) => w.text === '5'), JSON.stringify(kanaOnly.words.map((w) => w.text)));
  // A number IPADIC cuts at , or . is one word, never a word without its sound.
  const grouped = await timed('価格は1,000,000円と3.14円です。', 'ja-woman-1');
  assert.deepEqual(grouped.words.map((w) => w.text), ['価格', 'は', '1,000,000', '円', 'と', '3.14', '円です']);
  for (const w of grouped.words) assert.ok(w.end > w.start, JSON.stringify(w));
});

test('the first Japanese stretch before a Latin run is timed by phoneme events too', async () => {
  const text = '東京でPythonを書きました。';
  const { words } = await timed(text, 'ja-woman-1');
  const segments = await speechSegments(text, 'ja');
  assert.equal(segments[0]!.language, 'ja');
  const es = await EspeakSynth.create();
  es.reset();
  const events: number[] = [];
  es.synthesize(espeakVoiceName('ja-woman-1', 'ja'), segments[0]!.text, () => false, undefined, (e) => events.push(e.sample));
  assert.deepEqual(
    words.slice(0, 2).map((w) => [w.start, w.end].every((s) => events.includes(s))),
    [true, true],
  );
});

test('timing words changes no sample: the audio is that of eSpeak NG speaking the kana', async () => {
  const text = 'きょうはいいてんきですね。';
  const first = await timed(text, 'ja-man-1');
  const es = await EspeakSynth.create();
  es.reset();
  const blocks: Buffer[] = [];
  es.synthesize(espeakVoiceName('ja-man-1', 'ja'), (await speechSegments(text, 'ja'))[0]!.text, (b) => {
    blocks.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    return false;
  });
  // pcm16 little-endian at 22050 Hz, gain 0: the bytes are eSpeak's samples.
  assert.ok(Buffer.concat(blocks).equals(first.audio), 'identical bytes');
  const again = await timed(text, 'ja-man-1');
  assert.ok(again.audio.equals(first.audio));
  assert.deepEqual(again.words, first.words);
});

/**
 * Word timings' shape for `text`: every letter and digit in exactly one word, words in order and
 * not overlapping, each word's text that of its offsets, start ≤ end and starts not decreasing.
 * @returns the problems found ([] when none).
 */
function coverageProblems(text: string, words: readonly WordTiming[]): string[] {
  const problems: string[] = [];
  words.forEach((w, i) => {
    const before = words[i - 1];
    if (w.text !== text.slice(w.charStart, w.charEnd)) problems.push(`${w.text} is not the text at ${w.charStart}–${w.charEnd}`);
    if (w.start > w.end) problems.push(`${w.text} ends before it starts`);
    if (before !== undefined && w.start < before.start) problems.push(`${w.text} starts before ${before.text}`);
    if (before !== undefined && w.charStart < before.charEnd) problems.push(`${w.text} overlaps ${before.text}`);
  });
  [...text].forEach((ch, k) => {
    const at = [...text].slice(0, k).join('').length;
    if (/[\p{L}\p{N}]/u.test(ch) && !words.some((w) => w.charStart <= at && at < w.charEnd)) problems.push(`${ch} (at ${at}) is in no word`);
  });
  return problems;
}

test('ranges, codes, dates, times and mixed text: every word of the text has its timing, in order, from the engine', async () => {
  // Before: a text with a range or a code had no number readings at all, so 1月5日's 5 found no
  // phonemes and was left out; 20th was read ニジュー "th", its words 20 and th.
  const cases: readonly (readonly [string, readonly string[]])[] = [
    ['3-5日と1月5日に行きます。', ['3', '5', '日', 'と', '1', '月', '5', '日', 'に', '行きます']],
    ['電話は03-1234-5678、〒150-0002です。', ['電話', 'は', '03', '1234', '5678', '150', '0002です']],
    ['A-3とNo.12、版は3.5.1です。', ['A', '3', 'と', 'No.12', '版', 'は', '3.5.1です']],
    ['2024/1/5の14:30に2-3人、住所は1-2-3。', ['2024', '1', '5', 'の', '14', '30', 'に', '2', '3', '人', '住所', 'は', '1', '2', '3']],
    ['今日は20th anniversaryです。第20回。', ['今日', 'は', '20th', 'anniversary', 'です', '第', '20', '回']],
    // A number glued to letters and a model number are the English voice's words, whole.
    ['5G対応の3Dプリンターと4Kテレビ。', ['5G', '対応', 'の', '3D', 'プリンター', 'と', '4K', 'テレビ']],
    ['iPhone 15を買った。Windows 11も。', ['iPhone', '15', 'を', '買った', 'Windows', '11', 'も']],
    // Units after digits are the number reader's, said in Japanese (4GB ヨンギガバイト), with ranges, decimals and commas.
    ['メモリは2〜4GB、3.5GHzで1,024MBの16ビット。', ['メモリ', 'は', '2', '4GB', '3.5GHz', 'で', '1,024MB', 'の', '16', 'ビット']],
    ['スマホは128GBと5000mAh、電子レンジは600W。', ['スマホ', 'は', '128', 'GB', 'と', '5000', 'mAh', '電子', 'レンジ', 'は', '600', 'W']],
    // Not a unit: W before 杯 (the World Cup) is the English voice's with its digits.
    ['2022W杯を見た。', ['2022W', '杯', 'を', '見た']],
  ];
  for (const [text, expected] of cases) {
    const { audio, words } = await timed(text, 'ja-woman-1');
    assert.deepEqual(words.map((w) => w.text), expected, text);
    assert.deepEqual(coverageProblems(text, words), [], text);
    for (const w of words) assert.ok(w.start < w.end && w.end <= audio.length / 2, `${w.text}: ${w.start}–${w.end}`);
  }
});

/** Kanji words, kana words, particles and endings, Latin words and codes for the generated sentences. */
const KANJI = ['東京', '会議', '天気', '電車', '学校', '先生', '料金', '予定', '会社', '部屋', '駅', '今日', '明日', '大阪', '問題', '番号', '住所', '電話', '版', '期間', '参加者', '午後', '来月', '千代田', '新しい'];
const KANA = ['きょう', 'あした', 'ここ', 'それ', 'とても', 'ゆっくり', 'ラーメン', 'テスト', 'みんな', 'コーヒー', 'ヘヘ'];
const JOINERS = ['は', 'が', 'を', 'に', 'で', 'と', 'の', 'から', 'まで', 'へ', 'も', '、', '。', '・', ' ', '「', '」', '（', '）', ''];
const ENDINGS = ['です。', 'ます。', '行きます。', '書きました。', 'だった！', 'ある？', 'かな'];
const LATIN = ['Python', 'iPhone 15', 'MP3', 'COVID-19', 'A-3', 'No.12', 'v2.0', 'Hello world', 'AT&T', 'e-mail', '20th anniversary', '3rd', 'OK'];
const COUNTERS = ['本', '個', '人', '円', 'km', '%', '日', '月', '時', '分', '回', '階', '歳', 'kg', 'ページ', '年', '枚', 'つ', '番', '号', 'GB', 'MHz', 'Mbps', 'mAh', 'W', ''];

const n = (min: number, max: number): fc.Arbitrary<number> => fc.integer({ min, max });
const two = (min: number, max: number): fc.Arbitrary<string> => n(min, max).map((v) => String(v).padStart(2, '0'));
/** Numbers as Japanese text writes them: with , . - / :, ranges, dates, times, codes, counters, kanji numerals. */
const NUMBER: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(n(0, 99999), fc.constantFrom(...COUNTERS)).map(([v, c]) => `${v}${c}`),
  fc.tuple(n(1, 999), n(0, 999), fc.constantFrom(...COUNTERS)).map(([a, b, c]) => `${a},${String(b).padStart(3, '0')}${c}`),
  fc.tuple(n(0, 99), n(0, 99), fc.constantFrom(...COUNTERS)).map(([a, b, c]) => `${a}.${b}${c}`),
  fc.tuple(n(1, 9), fc.constantFrom('-', '〜', '~', ' 〜 '), n(10, 30), fc.constantFrom(...COUNTERS)).map(([a, s, b, c]) => `${a}${s}${b}${c}`),
  fc.tuple(n(1990, 2030), fc.constantFrom('-', '/', '.'), two(1, 12), two(1, 31)).map(([y, s, m, d]) => `${y}${s}${m}${s}${d}`),
  fc.tuple(n(1, 12), n(1, 31)).map(([m, d]) => `${m}月${d}日`),
  fc.tuple(n(0, 23), two(0, 59)).map(([h, m]) => `${h}:${m}`),
  fc.tuple(n(1, 99), n(100, 9999), n(1000, 9999)).map(([a, b, c]) => `0${a}-${b}-${c}`),
  fc.tuple(n(100, 999), n(0, 9999)).map(([a, b]) => `〒${a}-${String(b).padStart(4, '0')}`),
  fc.tuple(n(1, 9), n(1, 30), n(1, 30)).map(([a, b, c]) => `${a}-${b}-${c}`),
  fc.tuple(n(1, 9), n(0, 9), n(0, 9)).map(([a, b, c]) => `${a}.${b}.${c}`),
  fc.tuple(n(1, 12), n(1, 31)).map(([a, b]) => `${a}/${b}`),
  fc.tuple(n(1, 99), fc.constantFrom('st', 'nd', 'rd', 'th')).map(([v, s]) => `${v}${s}`),
  fc.tuple(n(1, 99), fc.constantFrom('G', 'D', 'K', 'LDK', 'GB')).map(([v, s]) => `${v}${s}`),
  fc.tuple(fc.constantFrom('Windows ', 'Wi-Fi ', 'iPhone ', 'Node.js '), n(1, 99)).map(([w, v]) => `${w}${v}`),
  n(1, 99).map((v) => `第${v}回`),
  fc.constantFrom('二十歳', '三本', '五日', '二〇二四年', '何人', '十分', '一緒'),
);

/** A sentence of 1–6 words or numbers, each followed by a particle or punctuation (or nothing), and an ending. */
const SENTENCE: fc.Arbitrary<string> = fc
  .tuple(fc.array(fc.tuple(fc.oneof(NUMBER, NUMBER, fc.constantFrom(...KANJI), fc.constantFrom(...KANA), fc.constantFrom(...LATIN)), fc.constantFrom(...JOINERS)), { minLength: 1, maxLength: 6 }), fc.constantFrom(...ENDINGS))
  .map(([parts, ending]) => parts.map(([word, joiner]) => word + joiner).join('') + ending);

test('generated sentences: the word timings cover every letter and digit exactly once, in order (fixed seed)', async () => {
  // The engine's own pieces in-process, without synthesizing (eSpeak NG's ~100 ms a sentence would
  // make a few hundred take half a minute): each Japanese segment's phoneme events stand in as
  // eSpeak's translator gives them for the segment's clauses, one event per phoneme, a pause
  // closing each clause; each Latin run's words as Flite would time them, one after the other.
  const es = await EspeakSynth.create();
  const voice = espeakVoiceName('ja-woman-1', 'ja');
  const tokenizer = await loadTokenizer();
  const timeWords = async (text: string): Promise<WordTiming[]> => {
    const segments = await speechSegments(text, 'ja');
    let clock = 0;
    const timings: SegmentTiming[] = segments.map((s) => {
      if (s.language === 'en') return { words: speakableTokens(s.text).map((t) => ({ start: clock, end: (clock += 1000), segStart: t.start, segEnd: t.end })), sounds: [] };
      // eSpeak's translator gives one clause a call: cut at punctuation and every 30 characters.
      const phonemes: EspeakPhonemeEvent[] = [];
      for (const clause of es.phonemes(voice, s.text.match(/[^、。！？!?,.]{1,30}[、。！？!?,.]*/gu) ?? [])) {
        for (const phoneme of [...clause, '']) phonemes.push({ phoneme, sample: phonemes.length * 100 });
      }
      const from = clock;
      clock += phonemes.length * 100;
      return { words: [], sounds: [{ clock: (sample) => from + sample, envelope: new EnergyEnvelope(), total: phonemes.length * 100, phonemes, voice }] };
    });
    return japaneseTimings(text, segments, timings, containsKanji(text.normalize('NFKC')) ? tokenizer : undefined, (v, kana) => es.phonemes(v, kana));
  };
  await fc.assert(
    fc.asyncProperty(SENTENCE, async (text) => {
      assert.deepEqual(coverageProblems(text, await timeWords(text)), [], text);
    }),
    { seed: 20240611, numRuns: 300 },
  );
});
