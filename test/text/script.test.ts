/**
 * Dialogue scripts (src/text/script.ts, docs/cli.md §11.2): how a name is told from a colon in a
 * line, continuation lines, the cast and its refusals, `--cast` parsing, the spans with the turn
 * gap and the lexicon, and the speaker in subtitle cues (src/speak/subtitles.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TtsError } from '../../src/errors.js';
import { formatCue } from '../../src/speak/subtitles.js';
import { MAX_TURNS, parseCast, parseScript, readScript, speakerOf } from '../../src/text/script.js';

const en = (): 'en' => 'en';

describe('script lines', () => {
  it('reads "Name: line", full-width colons and names with spaces', () => {
    assert.deepEqual(speakerOf('Alice: Hello.'), { speaker: 'Alice', rest: 'Hello.' });
    assert.deepEqual(speakerOf('先生：おはよう。'), { speaker: '先生', rest: 'おはよう。' });
    assert.deepEqual(speakerOf('  Mary Ann : Yes'), { speaker: 'Mary Ann', rest: 'Yes' });
    assert.deepEqual(speakerOf('Dr. Who:'), { speaker: 'Dr. Who', rest: '' });
  });
  it('tells a colon inside a line from a name', () => {
    for (const line of ['At 10:30 we met.', 'Well, then: go.', 'Wait! Stop: now.', 'http://example.com is down', '10: ten', `${'A'.repeat(33)}: too long a name`, '"Quoted": no']) {
      assert.equal(speakerOf(line), undefined, line);
    }
  });
  it('continues the previous speaker on lines without a name, skips blank lines, and a backslash line is always text', () => {
    const turns = parseScript('Alice: One.\nTwo.\n\n\\Note: three.\nBob: Four.\r\nAlice:\nFive.\n', 'x.script.txt');
    assert.deepEqual(turns, [
      { speaker: 'Alice', text: 'One. Two. Note: three.', line: 1 },
      { speaker: 'Bob', text: 'Four.', line: 5 },
      { speaker: 'Alice', text: 'Five.', line: 6 },
    ]);
  });
  it('refuses text before the first name, with its line', () => {
    assert.throws(() => parseScript('\nHello there.\nAlice: Hi.', 'x.script.txt'), (e: unknown) => e instanceof TtsError && e.code === 'usage' && /^x\.script\.txt:2: a script line needs a speaker/.test(e.message));
  });
  it(`refuses more than ${MAX_TURNS} turns`, () => {
    const text = 'A: x\n'.repeat(MAX_TURNS + 1);
    assert.throws(() => parseScript(text, 's'), (e: unknown) => e instanceof TtsError && e.message === `s:${MAX_TURNS + 1}: more than ${MAX_TURNS} turns in one script`);
  });
});

describe('the cast', () => {
  it('lists every name without a voice, and the names that have one', async () => {
    await assert.rejects(
      readScript(['Alice: a\nBob: b\nCarol: c\nDave: d\nBob: e'], { source: 's', cast: new Map([['Alice', 'en-woman-1'], ['Dave', 'en-man-1']]), languageOf: en, gapMs: 400 }),
      (e: unknown) => e instanceof TtsError && e.exitCode === 2 && e.message === 'no voice for "Bob", "Carol" in the script' && /voices are set for "Alice", "Dave"/.test(e.hint ?? ''),
    );
  });
  it('parses --cast, refusing a pair without = and a name given twice', () => {
    assert.deepEqual([...parseCast('Alice=en-woman-1, Bob = en-man-1,先生=ja-man-1')], [['Alice', 'en-woman-1'], ['Bob', 'en-man-1'], ['先生', 'ja-man-1']]);
    assert.throws(() => parseCast('Alice'), /NAME=VOICE/);
    assert.throws(() => parseCast('A=x,A=y'), /"A" twice/);
    assert.throws(() => parseCast('=x'), /NAME=VOICE/);
  });
  it('makes one span per turn in its voice and language, the gap before every turn but the first, the lexicon by language', async () => {
    const cast = new Map([['Alice', 'en-woman-1'], ['Sensei', 'ja-man-1']]);
    const rewrite = (text: string, language: string): string => (language === 'en' ? text.replace('SQL', 'sequel') : text.replace('東雲', 'しののめ'));
    const spans = await readScript(['Alice: SQL.\nSensei：東雲。\nAlice: SQL again.'], { source: 's', cast, languageOf: (v) => (v.startsWith('ja') ? 'ja' : 'en'), gapMs: 400, rewrite });
    assert.deepEqual([...spans], [
      { text: 'sequel.', voice: 'en-woman-1', language: 'en', speaker: 'Alice', newSentence: true },
      { text: 'しののめ。', voice: 'ja-man-1', language: 'ja', speaker: 'Sensei', newSentence: true, breakBeforeMs: 400 },
      { text: 'sequel again.', voice: 'en-woman-1', language: 'en', speaker: 'Alice', newSentence: true, breakBeforeMs: 400 },
    ]);
  });
});

describe('the speaker in subtitles', () => {
  const span = { speaker: 'Alice <3 & Bob' };
  it('is a WebVTT voice span, escaped', () => {
    assert.equal(formatCue('vtt', 1, { start: 0, end: 1.5, text: 'Hi & bye', span }), '00:00:00.000 --> 00:00:01.500\n<v Alice &lt;3 &amp; Bob>Hi &amp; bye\n\n');
  });
  it('is "Name: " in SubRip', () => {
    assert.equal(formatCue('srt', 2, { start: 0, end: 1.5, text: 'Hi', span: { speaker: 'Bob' } }), '2\n00:00:00,000 --> 00:00:01,500\nBob: Hi\n\n');
  });
  it('is absent for a cue without a speaker', () => {
    assert.equal(formatCue('srt', 1, { start: 0, end: 1, text: 'Hi', span: {} }), '1\n00:00:00,000 --> 00:00:01,000\nHi\n\n');
  });
  it('drops control characters from the name', () => {
    assert.equal(formatCue('srt', 1, { start: 0, end: 1, text: 'Hi', span: { speaker: 'Al\u001b[2Jice' } }).split('\n')[2], 'Al[2Jice: Hi');
  });
});
