/**
 * Word timings out of a run (docs/cli.md §12.1; src/speak/word-source.ts, word-outputs.ts,
 * audio-stage.ts, subtitles.ts, cache/opener.ts): `--word-timings FILE.jsonl`, `--subtitles
 * FILE.vtt|srt --words`, `--json` words; identical from the piece cache; times of the delivered
 * audio after -r, --speed and --pause. In-process runs against the built-in service.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AudioStage } from '../../src/speak/audio-stage.js';
import { formatKaraokeCue, openSubtitles } from '../../src/speak/subtitles.js';
import { TextOffsets, wordLine } from '../../src/speak/word-outputs.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { interpretEvent } from '../../src/client/sse-events.js';
import { interpretFrame } from '../../src/client/realtime-frames.js';
import { askingForWords } from '../../src/speak/channels.js';
import { TtsError } from '../../src/errors.js';
import type { AudioChunk } from '../../src/wire/delta.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tts-words-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Line {
  word: string;
  start: number;
  end: number;
  piece: number;
  char_start: number;
  char_end: number;
}

const lines = (text: string): Line[] =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

// A non-BMP character and full-width letters before the words: offsets count code points of the text as given.
const TEXT = '𝄞 Hello world, this is a test. Ｈｅｌｌｏ again: the second sentence!';

describe('word timings out of a run', () => {
  it('--word-timings, --subtitles --words and --json words; a cached rerun gives the same bytes', async () => {
    const env = { XDG_CACHE_HOME: join(dir, 'cache') };
    const args = (n: string): string[] => ['say', '--offline', '-v', 'en-woman-1', '-o', join(dir, `${n}.wav`), '--subtitles', join(dir, `${n}.vtt`), '--words', '--word-timings', join(dir, `${n}.jsonl`), '--json', TEXT];
    const first = await runTtsInProcess(args('a'), { env });
    assert.equal(first.code, 0, first.stderr);
    const json = JSON.parse(first.stderr.trim().split('\n').at(-1)!) as { words: number; cache_hits: number };
    const words = lines(await readFile(join(dir, 'a.jsonl'), 'utf8'));
    assert.equal(json.words, 11);
    // 𝄞 is no word (nothing to say); Ｈｅｌｌｏ is one.
    assert.equal(words.length, 11);
    const points = [...TEXT];
    for (const w of words) assert.equal(points.slice(w.char_start, w.char_end).join(''), w.word);
    assert.deepEqual(
      words.map((w) => w.piece),
      [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1],
    );
    words.forEach((w, i) => {
      assert.ok(w.start < w.end);
      if (i > 0) assert.ok(words[i - 1]!.end <= w.start);
    });
    const vtt = await readFile(join(dir, 'a.vtt'), 'utf8');
    assert.match(vtt, /^WEBVTT\n\n00:00:00\.000 --> \d\d:\d\d:\d\d\.\d{3}\n𝄞 Hello <\d\d:\d\d:\d\d\.\d{3}>world, <\d\d:\d\d:\d\d\.\d{3}>this /);
    // Everything from the cache: the same timings, byte for byte.
    const second = await runTtsInProcess(args('b'), { env });
    assert.equal(second.code, 0, second.stderr);
    assert.equal((JSON.parse(second.stderr.trim().split('\n').at(-1)!) as { cache_hits: number }).cache_hits, 2);
    assert.deepEqual(await readFile(join(dir, 'b.jsonl')), await readFile(join(dir, 'a.jsonl')));
    assert.deepEqual(await readFile(join(dir, 'b.vtt')), await readFile(join(dir, 'a.vtt')));
    // -r 16000 --speed 1.5 --pause 300: the first piece's words come 1.5 times sooner, the second's
    // after the same scaling plus the pause; SRT gets a cue per word.
    const third = await runTtsInProcess(['say', '--offline', '-v', 'en-woman-1', '-o', join(dir, 'c.wav'), '-r', '16000', '--speed', '1.5', '--pause', '300', '--subtitles', join(dir, 'c.srt'), '--words', '--word-timings', join(dir, 'c.jsonl'), TEXT], { env });
    assert.equal(third.code, 0, third.stderr);
    const fast = lines(await readFile(join(dir, 'c.jsonl'), 'utf8'));
    assert.equal(fast.length, words.length);
    fast.forEach((w, i) => {
      const slow = words[i]!;
      // Sonic's output length per piece is within a few ms of input ÷ speed; each piece is scaled
      // by its own delivered length, so the error does not grow along the text.
      const expected = slow.piece === 0 ? slow.start / 1.5 : fast.find((f) => f.piece === 1)!.start + (slow.start - words.find((s) => s.piece === 1)!.start) / 1.5;
      assert.ok(Math.abs(w.start - expected) <= 0.01, `${w.word}: ${w.start} vs ${expected.toFixed(3)}`);
    });
    const gap = fast.find((w) => w.piece === 1)!.start - fast.filter((w) => w.piece === 0).at(-1)!.end;
    assert.ok(gap >= 0.3, `the pause is between the pieces' words (${gap} s)`);
    // The WebSocket channel: the session's rate (16000 Hz asked), the same instants.
    const ws = await runTtsInProcess(['realtime', '--offline', '-v', 'en-woman-1', '-r', '16000', '-o', join(dir, 'r.wav'), '--word-timings', join(dir, 'r.jsonl'), TEXT], { env });
    assert.equal(ws.code, 0, ws.stderr);
    const viaWs = lines(await readFile(join(dir, 'r.jsonl'), 'utf8'));
    assert.deepEqual(
      viaWs.map((w) => [w.word, w.char_start]),
      words.map((w) => [w.word, w.char_start]),
    );
    viaWs.forEach((w, i) => assert.ok(Math.abs(w.start - words[i]!.start) <= 0.002, `${w.word}: ${w.start} vs ${words[i]!.start}`));
    const srt = await readFile(join(dir, 'c.srt'), 'utf8');
    assert.match(srt, /^1\n00:00:00,\d{3} --> 00:00:00,\d{3}\nHello\n\n2\n/);
    assert.equal(srt.split('\n\n').filter((c) => c.trim() !== '').length, 11);
  });

  it('the piece cache: a plain run’s pieces do not answer a run that needs words; a timed run’s answer both, with the words of --no-cache', async () => {
    const text = 'Cache me once. Then time my words.';
    const run = async (name: string, cache: string | undefined, words: boolean): Promise<{ hits: number; requests: number; words: string | undefined; wav: Buffer }> => {
      const env = cache === undefined ? { TTS_NO_CACHE: '1' } : { XDG_CACHE_HOME: join(dir, cache) };
      const jsonl = join(dir, `${name}.jsonl`);
      const r = await runTtsInProcess(['say', '--offline', '-v', 'en-man-1', '-o', join(dir, `${name}.wav`), '--json', ...(words ? ['--word-timings', jsonl] : []), text], { env });
      assert.equal(r.code, 0, r.stderr);
      const json = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { cache_hits: number; requests: number };
      return { hits: json.cache_hits, requests: json.requests, words: words ? await readFile(jsonl, 'utf8') : undefined, wav: await readFile(join(dir, `${name}.wav`)) };
    };
    const fresh = await run('nocache', undefined, true);
    assert.equal(fresh.words!.trim().split('\n').length, 7);
    const pieces = fresh.requests;
    assert.ok(pieces > 0);
    // A plain run fills the cache; a run with --word-timings then asks the service again (a
    // replay would have no words), and stores what it answered: the next one is all hits.
    const plain = await run('plain1', 'plain-first', false);
    const timed = await run('timed1', 'plain-first', true);
    assert.equal(timed.hits, 0, 'entries without words do not answer a run that needs them');
    assert.equal(timed.words, fresh.words);
    assert.ok(timed.wav.equals(plain.wav) && timed.wav.equals(fresh.wav), 'the same audio either way');
    const timedAgain = await run('timed2', 'plain-first', true);
    assert.equal(timedAgain.hits, pieces);
    assert.equal(timedAgain.words, fresh.words);
    // The reverse order: a timed run's entries answer a plain run and the next timed one.
    const timedFirst = await run('timed3', 'timed-first', true);
    assert.equal(timedFirst.hits, 0);
    assert.equal(timedFirst.words, fresh.words);
    const plainAfter = await run('plain2', 'timed-first', false);
    assert.equal(plainAfter.hits, pieces, 'entries with words answer a run that needs none');
    assert.ok(plainAfter.wav.equals(fresh.wav));
    const timedAfter = await run('timed4', 'timed-first', true);
    assert.equal(timedAfter.hits, pieces);
    assert.equal(timedAfter.words, fresh.words);
  });

  it('--words without --subtitles is a usage error (exit 2), and nothing is written', async () => {
    const r = await runTtsInProcess(['say', '--offline', '-o', join(dir, 'd.wav'), '--words', 'Hello.']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--words times the words of the --subtitles file/);
    const same = await runTtsInProcess(['say', '--offline', '-o', join(dir, 'd.wav'), '--word-timings', join(dir, 'd.wav'), 'Hello.']);
    assert.equal(same.code, 2);
    assert.match(same.stderr, /is the audio output/);
  });

  it('--word-timings escapes C1 controls as --json does: `cat FILE` meets no one-byte CSI (docs/cli.md §12.1)', async () => {
    const file = join(dir, 'c1.jsonl');
    const r = await runTtsInProcess(['say', '--offline', '-v', 'en-woman-1', '-o', join(dir, 'c1.wav'), '--word-timings', file, 'Second\u009b2J one.']);
    assert.equal(r.code, 0, r.stderr);
    const text = await readFile(file, 'utf8');
    assert.doesNotMatch(text, /[\u0080-\u009f]/u, 'a raw C1 character in the file');
    assert.match(text, /\\u009b/u);
    // A JSON reader gets the word as written.
    assert.ok(lines(text).some((w) => w.word.includes('\u009b2J')), text);
  });
});

describe('bidirectional controls from the text in subtitles and word timings (docs/cli.md §1 `--subtitles`, §12.1; CVE-2021-42574)', () => {
  it('every cue line closes what it opens and keeps no stray terminator; the JSON lines hold none raw, and a JSON reader gets the word as written', async () => {
    const text = 'Pay \u202Eevil here. Then \u2067more\u2069 and \u202Cstray\u2069 text.';
    for (const format of ['vtt', 'srt'] as const) {
      const out = (ext: string): string => join(dir, `bidi-${format}.${ext}`);
      const r = await runTtsInProcess(['say', '--offline', '-v', 'en-woman-1', '-o', out('wav'), '--subtitles', out(format), '--words', '--word-timings', out('jsonl'), text], { env: { TTS_NO_CACHE: '1' } });
      assert.equal(r.code, 0, r.stderr);
      const cues = (await readFile(out(format), 'utf8')).split('\n').filter((l) => /[\u202A-\u202E\u2066-\u2069]/u.test(l));
      assert.ok(cues.some((l) => l.includes('\u202E')), 'the override is kept where it is closed');
      for (const line of cues) {
        let depth = 0;
        for (const ch of line) {
          if (/[\u202A\u202B\u202D\u202E\u2066-\u2068]/u.test(ch)) depth++;
          if (/[\u202C\u2069]/u.test(ch)) depth--;
          assert.ok(depth >= 0, `a terminator that closes nothing: ${JSON.stringify(line)}`);
        }
        assert.equal(depth, 0, `left open at the end of ${JSON.stringify(line)}`);
      }
      const jsonl = await readFile(out('jsonl'), 'utf8');
      assert.doesNotMatch(jsonl, /[\u202A-\u202E\u2066-\u2069]/u);
      assert.match(jsonl, /\\u202e/u);
      assert.ok(lines(jsonl).some((w) => w.word === '\u202Eevil'), jsonl);
    }
  });
});

describe('word timings and subtitles with a lexicon: the text as the user wrote it (docs/cli.md §11.3, §12.1)', () => {
  // A short key made long and a long one made short, early in the sentences: every later word's
  // offsets moved by the difference when they were told in the text as sent.
  const LEXICON = '[en]\n"SQL" = "structured query language"\n"Kubernetes" = "K"\n';
  /** The cue lines of a subtitle file, timestamps left out. */
  const cueTexts = (file: string): string[] =>
    file
      .split('\n')
      .filter((l) => l !== '' && l !== 'WEBVTT' && !/^\d+$/u.test(l) && !/-->/u.test(l))
      .map((l) => l.replace(/<\d\d:\d\d:\d\d\.\d{3}>/gu, ''));
  /** One run with the lexicon (`--lexicon`) or without (`--no-lexicon`): its word lines and subtitle cue lines. */
  const run = async (name: string, input: string[], lexicon: boolean, format: 'vtt' | 'srt'): Promise<{ words: Line[]; cues: string[] }> => {
    const lexiconFile = join(dir, 'lexicon.toml');
    await writeFile(lexiconFile, LEXICON);
    const out = (ext: string): string => join(dir, `${name}-${lexicon ? 'lex' : 'plain'}.${ext}`);
    const r = await runTtsInProcess(['stream', '--offline', '-v', 'en-woman-1', ...(lexicon ? ['--lexicon', lexiconFile] : ['--no-lexicon']), '-o', out('wav'), '--subtitles', out(format), '--words', '--word-timings', out('jsonl'), ...input], { env: { TTS_NO_CACHE: '1' } });
    assert.equal(r.code, 0, r.stderr);
    return { words: lines(await readFile(out('jsonl'), 'utf8')), cues: cueTexts(await readFile(out(format), 'utf8')) };
  };

  it('plain text: char_start/char_end index the words given, a word of a replacement is the key it replaced, the cues show what was written', async () => {
    const text = 'SQL and Kubernetes run the big cluster today. Then SQL again, with Kubernetes.';
    const withLexicon = await run('plain', [text], true, 'vtt');
    const points = [...text];
    for (const w of withLexicon.words) assert.equal(points.slice(w.char_start, w.char_end).join(''), w.word);
    assert.deepEqual(
      withLexicon.words.map((w) => [w.word, w.char_start, w.char_end]),
      [['SQL', 0, 3], ['and', 4, 7], ['Kubernetes', 8, 18], ['run', 19, 22], ['the', 23, 26], ['big', 27, 30], ['cluster', 31, 38], ['today.', 39, 45], ['Then', 46, 50], ['SQL', 51, 54], ['again,', 55, 61], ['with', 62, 66], ['Kubernetes.', 67, 78]],
    );
    // "structured query language" is one word, SQL, from the start of the first to the end of the last.
    const sql = withLexicon.words[0]!;
    assert.ok(sql.end - sql.start > 0.8, `SQL said as three words takes ${sql.end - sql.start} s`);
    assert.ok(sql.end <= withLexicon.words[1]!.start);
    assert.deepEqual(withLexicon.cues, ['SQL and Kubernetes run the big cluster today.', 'Then SQL again, with Kubernetes.']);
    // The same words, offsets and cue text as without the lexicon.
    const without = await run('plain', [text], false, 'vtt');
    assert.deepEqual(withLexicon.words.map((w) => [w.word, w.char_start, w.char_end, w.piece]), without.words.map((w) => [w.word, w.char_start, w.char_end, w.piece]));
    assert.deepEqual(withLexicon.cues, without.cues);
  });

  it('--lines: char_start/char_end index standard input as given, its line breaks (CR LF too) and blank lines counted, with the lexicon or without', async () => {
    const input = 'SQL one.\n\n  \r\nThen Kubernetes.\r\n𝄞 last SQL line\nend';
    const points = [...input];
    const lexiconFile = join(dir, 'lexicon.toml');
    await writeFile(lexiconFile, LEXICON);
    for (const lexicon of [['--lexicon', lexiconFile], ['--no-lexicon']]) {
      const out = join(dir, `lines${lexicon.length}.jsonl`);
      const r = await runTtsInProcess(['stream', '--offline', '-v', 'en-woman-1', '--lines', ...lexicon, '-o', join(dir, 'lines.wav'), '--word-timings', out], { env: { TTS_NO_CACHE: '1' }, input });
      assert.equal(r.code, 0, r.stderr);
      const words = lines(await readFile(out, 'utf8'));
      assert.deepEqual(
        words.map((w) => w.word),
        ['SQL', 'one.', 'Then', 'Kubernetes.', 'last', 'SQL', 'line', 'end'],
      );
      for (const w of words) assert.equal(points.slice(w.char_start, w.char_end).join(''), w.word, `${lexicon[0]}: ${JSON.stringify(w)}`);
    }
  });

  it('SSML, a dialogue script and a Markdown document: the same words, offsets and cues as without the lexicon (SubRip word cues too)', async () => {
    const ssml = join(dir, 'lex.ssml');
    await writeFile(ssml, '<speak>Use <emphasis>SQL</emphasis> now.  The  SQL <sub alias="K">X</sub> and Kubernetes run <prosody rate="fast">fast SQL</prosody> end.</speak>');
    const script = join(dir, 'lex.script.txt');
    await writeFile(script, 'Alice: SQL is here.\nBob: Kubernetes runs SQL too.\n');
    const markdown = join(dir, 'lex.md');
    await writeFile(markdown, '# One\n\nSQL is fine. Kubernetes too.\n\n# Two\n\nMore SQL here.\n');
    for (const [name, input] of [['ssml', ['-f', ssml]], ['script', ['--cast', 'Alice=en-woman-1,Bob=en-man-1', '-f', script]], ['markdown', ['-f', markdown]]] as const) {
      for (const format of ['vtt', 'srt'] as const) {
        const withLexicon = await run(`${name}-${format}`, [...input], true, format);
        const without = await run(`${name}-${format}`, [...input], false, format);
        assert.ok(withLexicon.words.filter((w) => w.word.startsWith('SQL')).length >= 2, `${name}: ${JSON.stringify(withLexicon.words)}`);
        assert.deepEqual(withLexicon.words.map((w) => [w.word, w.char_start, w.char_end, w.piece]), without.words.map((w) => [w.word, w.char_start, w.char_end, w.piece]), name);
        assert.deepEqual(withLexicon.cues, without.cues, `${name} ${format}`);
        assert.ok(!withLexicon.cues.some((c) => /structured|query/u.test(c)), `${name}: ${withLexicon.cues.join(' | ')}`);
      }
    }
  });
});

describe('the pieces of the outputs', () => {
  it('the stage maps a piece’s word frames through its delivered length', async () => {
    const spec = { format: 'pcm16' as const, sampleRate: 1000, channels: 1 };
    const stage = (await AudioStage.create(spec, { speed: 1, volume: 1, pauseMs: 500, cues: true }))!;
    stage.audio(Buffer.alloc(2000));
    const a = stage.pieceEnd('Hi there.', { sampleRate: 24000, words: [{ text: 'Hi', start: 2400, end: 4800, charStart: 0, charEnd: 2 }] });
    assert.deepEqual(a.cue?.words, [{ text: 'Hi', start: 0.1, end: 0.2, charStart: 0, charEnd: 2 }]);
    stage.audio(Buffer.alloc(2000));
    const b = stage.pieceEnd('Yes.', { sampleRate: 24000, words: [{ text: 'Yes.', start: 12000, end: 30000, charStart: 0, charEnd: 4 }] });
    // After the 0.5 s pause; a word past the piece's end is cut at it.
    assert.deepEqual(b.cue?.words, [{ text: 'Yes.', start: 2, end: 2.5, charStart: 0, charEnd: 4 }]);
  });

  it('the client reads words from done and completed; a malformed array is no timings', () => {
    const words = [{ text: 'Hi', start: 0, end: 480, charStart: 0, charEnd: 2 }];
    const done = interpretEvent({ event: 'done', data: JSON.stringify({ type: 'speech.audio.done', item_id: 'i', words }), id: undefined });
    assert.deepEqual(done, { kind: 'done', engine: undefined, words });
    const completed = interpretFrame(JSON.stringify({ type: 'tts.output.completed', session_id: 's', words }));
    assert.deepEqual(completed, { kind: 'completed', engine: undefined, words });
    const bad = interpretEvent({ event: 'done', data: JSON.stringify({ type: 'speech.audio.done', item_id: 'i', words: [{ text: 'Hi', start: 5, end: 1, charStart: 0, charEnd: 2 }] }), id: undefined });
    assert.deepEqual(bad, { kind: 'done', engine: undefined, words: undefined });
  });

  it('SubRip cues per word keep the speaker of a dialogue script (docs/cli.md §11.2)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tts-words-srt-'));
    try {
      const path = join(dir, 'turns.srt');
      const subtitles = await openSubtitles(path, { words: true });
      const words = [
        { text: 'Hi', start: 0.1, end: 0.4, charStart: 0, charEnd: 2 },
        { text: 'Bo.', start: 0.5, end: 0.9, charStart: 3, charEnd: 6 },
      ];
      await subtitles.add({ start: 0, end: 1, text: 'Hi Bo.', words, span: { speaker: 'Al' } });
      await subtitles.finish();
      assert.equal(await readFile(path, 'utf8'), '1\n00:00:00,100 --> 00:00:00,400\nAl: Hi\n\n2\n00:00:00,500 --> 00:00:00,900\nAl: Bo.\n\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('karaoke cue text, JSON lines and text offsets', () => {
    const cue = {
      start: 1,
      end: 2,
      text: '  A <b> & c\nd ',
      words: [
        { text: 'A', start: 1, end: 1.2, charStart: 2, charEnd: 3 },
        { text: '<b>', start: 1.25, end: 1.5, charStart: 4, charEnd: 7 },
        { text: 'c', start: 1.6, end: 1.7, charStart: 10, charEnd: 11 },
        { text: 'd', start: 1.8, end: 1.9, charStart: 12, charEnd: 13 },
      ],
    };
    assert.equal(formatKaraokeCue(cue), '00:00:01.000 --> 00:00:02.000\nA <00:00:01.250>&lt;b&gt; &amp; <00:00:01.600>c <00:00:01.800>d\n\n');
    // A dialogue script's cue keeps its speaker with --words (docs/cli.md §11.2): the voice span
    // before the karaoke body, `Name: ` before each SubRip word cue.
    const turn = { ...cue, span: { text: cue.text, speaker: 'Al & <Bo>' } };
    assert.equal(formatKaraokeCue(turn), '00:00:01.000 --> 00:00:02.000\n<v Al &amp; &lt;Bo&gt;>A <00:00:01.250>&lt;b&gt; &amp; <00:00:01.600>c <00:00:01.800>d\n\n');
    assert.equal(wordLine({ text: 'é"', start: 0.12345, end: 1, charStart: 1, charEnd: 3 }, 4, (at) => at + 10), '{"word":"é\\"","start":0.123,"end":1,"piece":4,"char_start":11,"char_end":13}\n');
    // C1 (U+009B, a one-byte CSI), DEL and a bidirectional override escaped, as --json escapes them.
    assert.equal(wordLine({ text: 'a\u009b2J\u007f\u202e', start: 0, end: 1, charStart: 0, charEnd: 6 }, 0, undefined), '{"word":"a\\u009b2J\\u007f\\u202e","start":0,"end":1,"piece":0,"char_start":0,"char_end":6}\n');
  });

  it('TextOffsets finds each requested piece in the text as read, in code points', async () => {
    const offsets = new TextOffsets();
    const seen: string[] = [];
    for await (const p of offsets.track(
      (async function* () {
        yield '𝄞 One. ';
        yield '... ';
        yield 'Two three.';
      })(),
    ))
      seen.push(p);
    assert.equal(seen.length, 3);
    // UTF-16 offset 3 (after 𝄞 and the space) is code point 2.
    assert.equal(offsets.locate('𝄞 One. ')!.offset(3), 2);
    // '... ' was never spoken; 'Two' and 'three.' were requested as two parts.
    assert.equal(offsets.locate('Two ')!.offset(0), 11);
    assert.equal(offsets.locate('three.')!.offset(0), 15);
    assert.equal(offsets.locate('nowhere'), undefined);
  });
});

describe('asking the service for word timings (speak/channels.ts askingForWords)', () => {
  const audio = { data: Buffer.from([1, 0]), itemId: undefined };
  /** An opener that refuses a request carrying the field with `refusal`, and records what it was asked. */
  const opener = (refusal: TtsError | undefined, asked: boolean[], failAfterAudio = false) => (withField: boolean): AsyncIterable<AudioChunk> =>
    (async function* () {
      asked.push(withField);
      if (failAfterAudio) yield audio;
      if (withField && refusal !== undefined) throw refusal;
      yield audio;
    })();
  const drain = async (it: AsyncIterable<AudioChunk>): Promise<number> => {
    let n = 0;
    for await (const _ of it) n++;
    return n;
  };

  it('sends the field only when the run wants words', async () => {
    const asked: boolean[] = [];
    await drain(askingForWords({ wanted: false, refused: false }, () => {}, opener(undefined, asked)));
    await drain(askingForWords({ wanted: true, refused: false }, () => {}, opener(undefined, asked)));
    assert.deepEqual(asked, [false, true]);
  });

  it('a refusal that may be the field’s: asked again without it, once, and never again in the run', async () => {
    for (const refusal of [
      new TtsError('invalid_parameters', 'unknown field', { status: 400 }),
      new TtsError('bad_request', 'additional properties', { status: 400 }),
      new TtsError('unknown_field', 'word_timings', { status: 422 }),
      new TtsError('unknown_field', 'on the WebSocket stream', { final: true }),
    ]) {
      const ask = { wanted: true, refused: false };
      const asked: boolean[] = [];
      const lines: string[] = [];
      assert.equal(await drain(askingForWords(ask, (l) => lines.push(l), opener(refusal, asked))), 1);
      assert.equal(await drain(askingForWords(ask, (l) => lines.push(l), opener(refusal, asked))), 1);
      assert.deepEqual(asked, [true, false, false], refusal.code);
      assert.equal(ask.refused, true);
      assert.equal(lines.length, 1);
    }
  });

  it('any other refusal, or one after audio, is the run’s failure: not asked again', async () => {
    for (const [refusal, afterAudio] of [
      [new TtsError('voice_not_found', 'no voice', { status: 400 }), false],
      [new TtsError('invalid_api_key', 'no', { status: 401 }), false],
      [new TtsError('server_error', 'down', { status: 500 }), false],
      [new TtsError('connection_failed', 'refused'), false],
      [new TtsError('bad_request', 'mid-stream'), true],
    ] as const) {
      const ask = { wanted: true, refused: false };
      const asked: boolean[] = [];
      await assert.rejects(drain(askingForWords(ask, () => {}, opener(refusal, asked, afterAudio))), (e) => e === refusal);
      assert.deepEqual(asked, [true], refusal.code);
      assert.equal(ask.refused, false);
    }
  });
});
