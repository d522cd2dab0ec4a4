/**
 * Dialogue scripts (src/text/script.ts, docs/cli.md §11.2): how a name is told from a colon in a
 * line, continuation lines, the cast and its refusals, `--cast` parsing, the spans with the turn
 * gap and the lexicon, and the speaker in subtitle cues (src/speak/subtitles.ts).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RunMappedText } from '../../src/engine/mapped-text.js';
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

describe('a script read as it comes', () => {
  /**
   * The rules as they were written before scripts were read as they come: the whole text split
   * at line breaks, each line judged whole (the regular expression of docs/cli.md §11.2).
   */
  function reference(text: string, source: string): { speaker: string; text: string }[] {
    const name = /^([\p{L}][\p{L}\p{M}\p{N} _'.-]*?)\s*(?::(?=\s|$)|：)\s*/u;
    const turns: { speaker: string; text: string }[] = [];
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i]!;
      if (raw.trim() === '') continue;
      const m = raw.trimStart().startsWith('\\') ? null : name.exec(raw.trimStart());
      const named = m === null || [...m[1]!.trim()].length > 32 ? undefined : { speaker: m[1]!.trim(), rest: raw.trimStart().slice(m[0].length) };
      const said = named === undefined ? raw.trim().replace(/^\\/, '') : named.rest.trim();
      if (named !== undefined) {
        turns.push({ speaker: named.speaker, text: said });
        continue;
      }
      const last = turns[turns.length - 1];
      if (last === undefined) throw new TtsError('usage', `${source}:${i + 1}: a script line needs a speaker first ("Name: what they say")`);
      last.text = last.text === '' ? said : `${last.text} ${said}`;
    }
    const spoken = turns.filter((t) => t.text !== '');
    if (spoken.length === 0) throw new TtsError('usage', `${source} has no line to speak`);
    return spoken;
  }
  /** Names, colons, white space, text and lines long enough to be judged by their start (1024 code units). */
  const token = fc.constantFrom('Alice', 'Bob', 'Mary Ann', 'Dr. Who', '先生', ': ', ':', '：', ' : ', ' ', '\t', '\n', '\r\n', '\r', '\\', 'Hello.', 'At 10:30', 'Well, then: go', '😀', ' '.repeat(1100), 'word '.repeat(250), 'x'.repeat(1500), '\u3000', '\u00a0');
  const script = fc.array(token, { maxLength: 40 }).map((parts) => `Alice: start\n${parts.join('')}`);
  /** `s` cut into blocks at `cuts` (fractions), never inside a surrogate pair. */
  const blocksOf = (s: string, cuts: number[]): string[] => {
    const at = [...new Set(cuts.map((c) => Math.floor(c * s.length)))].sort((a, b) => a - b).filter((i) => i > 0 && i < s.length && !/[\udc00-\udfff]/.test(s[i]!));
    return [0, ...at].map((start, k) => s.slice(start, at[k] ?? s.length));
  };
  /** A voice for every speaker, whatever names the tokens make. */
  const cast = new (class extends Map<string, string> {
    override get(): string {
      return 'en-man-1';
    }
  })();

  it('gives the turns of the text split into lines, each judged whole, whatever the blocks and however long the lines', async () => {
    await fc.assert(
      fc.asyncProperty(script, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), async (text, cuts) => {
        let expected: { speaker: string; text: string }[] | string;
        try {
          expected = reference(text, 's');
        } catch (error) {
          expected = (error as Error).message;
        }
        let got: { speaker: string; text: string }[] | string;
        try {
          const spans = await readScript(blocksOf(text, cuts), { source: 's', cast, languageOf: en, gapMs: 400 });
          got = [...spans].map((s) => ({ speaker: s.speaker!, text: s.text }));
        } catch (error) {
          got = (error as Error).message;
        }
        assert.deepEqual(got, expected);
      }),
      { numRuns: 300 },
    );
  });

  it('judges a line of millions of spaces after a name in time linear in its length (a regular expression that backtracked took minutes)', () => {
    // In a child process: a regular expression runs to its end, whatever the test's own timeout.
    const script = `
      const { readScript, speakerOf } = await import(${JSON.stringify(new URL('../../src/text/script.js', import.meta.url).href)});
      const spaces = ' '.repeat(4 * 1024 * 1024);
      const spans = await readScript([\`Alice: hi\\nBob\${spaces}x\\nBob\${spaces}: there\\n\`], { source: 's', cast: new Map([['Alice', 'en-man-1'], ['Bob', 'en-man-1']]), languageOf: () => 'en', gapMs: 400 });
      console.log(JSON.stringify({ named: speakerOf(\`Bob\${spaces}: hi\`), text: speakerOf(\`Bob\${spaces}x\`) ?? null, spans: [...spans].map((s) => [s.speaker, s.text.length]), expected: \`hi Bob\${spaces}x\`.length }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });
    assert.equal(r.signal, null, 'the script was not read within a minute');
    assert.equal(r.status, 0, r.stderr);
    const got = JSON.parse(r.stdout) as { named: unknown; text: unknown; spans: [string, number][]; expected: number };
    assert.deepEqual(got.named, { speaker: 'Bob', rest: 'hi' });
    assert.equal(got.text, null);
    assert.deepEqual(got.spans, [
      ['Alice', got.expected],
      ['Bob', 'there'.length],
    ]);
  });
});

describe('the cast', () => {
  it('lists every name without a voice, and the names that have one', async () => {
    await assert.rejects(
      readScript(['Alice: a\nBob: b\nCarol: c\nDave: d\nBob: e'], { source: 's', cast: new Map([['Alice', 'en-woman-1'], ['Dave', 'en-man-1']]), languageOf: en, gapMs: 400 }),
      (e: unknown) => e instanceof TtsError && e.exitCode === 2 && e.message === 'no voice for "Bob", "Carol" in the script' && /voices are set for "Alice", "Dave"/.test(e.hint ?? ''),
    );
  });
  it('bounds what the refusal quotes: at most 10 names missing, "and N more", each name at most 60 characters', async () => {
    const names = Array.from({ length: 3000 }, (_, i) => `N${String(i).padStart(5, '0')}`);
    const cast = new Map([['Bob', 'x'], ['B'.repeat(100_000), 'en-man-1'], ...Array.from({ length: 50 }, (_, i) => [`C${i}`, 'en-man-1'] as [string, string])]);
    await assert.rejects(readScript([names.map((n) => `${n}: hi.`).join('\n')], { source: 's', cast, languageOf: en, gapMs: 400 }), (e: unknown) => {
      assert.ok(e instanceof TtsError && e.exitCode === 2);
      assert.equal(e.message, `no voice for ${names.slice(0, 10).map((n) => `"${n}"`).join(', ')} and 2,990 more in the script`);
      assert.match(e.hint ?? '', new RegExp(`^voices are set for "Bob", "${'B'.repeat(60)}…", "C0", .*"C7" and 42 more; give --cast ${names.slice(0, 10).map((n) => `${n}=VOICE`).join(',')},… or a \\[voices\\] table in the config file$`, 'u'));
      assert.ok(e.message.length + (e.hint ?? '').length < 1000, `${e.message.length + (e.hint ?? '').length} characters`);
      return true;
    });
    assert.throws(() => parseCast(`${'A'.repeat(100_000)}`), (e: unknown) => e instanceof Error && e.message.endsWith(`got "${'A'.repeat(60)}…"`));
    assert.throws(() => parseCast(`${'A'.repeat(100_000)}=x,${'A'.repeat(100_000)}=y`), (e: unknown) => e instanceof Error && e.message === `--cast gives "${'A'.repeat(60)}…" twice`);
  });
  it('parses --cast, refusing a pair without = and a name given twice', () => {
    assert.deepEqual([...parseCast('Alice=en-woman-1, Bob = en-man-1,先生=ja-man-1')], [['Alice', 'en-woman-1'], ['Bob', 'en-man-1'], ['先生', 'ja-man-1']]);
    assert.throws(() => parseCast('Alice'), /NAME=VOICE/);
    assert.throws(() => parseCast('A=x,A=y'), /"A" twice/);
    assert.throws(() => parseCast('=x'), /NAME=VOICE/);
  });
  it('makes one span per turn in its voice and language, the gap before every turn but the first, the lexicon by language', async () => {
    const cast = new Map([['Alice', 'en-woman-1'], ['Sensei', 'ja-man-1']]);
    // The first 'SQL' (en) or '東雲' (ja) replaced, with its map, as the lexicon gives it (text/lexicon.ts).
    const rewrite = (text: string, language: string): RunMappedText => {
      const [key, value] = language === 'en' ? ['SQL', 'sequel'] : ['東雲', 'しののめ'];
      const at = text.indexOf(key);
      return at === -1 ? RunMappedText.of(text) : RunMappedText.of(text).edit([{ start: at, end: at + key.length, text: value }]);
    };
    const spans = await readScript(['Alice: SQL.\nSensei：東雲。\nAlice: SQL again.'], { source: 's', cast, languageOf: (v) => (v.startsWith('ja') ? 'ja' : 'en'), gapMs: 400, rewrite });
    assert.deepEqual(
      [...spans].map(({ written: _, ...span }) => span),
      [
        { text: 'sequel.', voice: 'en-woman-1', language: 'en', speaker: 'Alice', newSentence: true },
        { text: 'しののめ。', voice: 'ja-man-1', language: 'ja', speaker: 'Sensei', newSentence: true, breakBeforeMs: 400 },
        { text: 'sequel again.', voice: 'en-woman-1', language: 'en', speaker: 'Alice', newSentence: true, breakBeforeMs: 400 },
      ],
    );
    // Each turn the lexicon changed keeps the turn as written, for its words and cues (docs/cli.md §12.1).
    assert.deepEqual(
      [...spans].map((s) => s.written?.source),
      ['SQL.', '東雲。', 'SQL again.'],
    );
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
