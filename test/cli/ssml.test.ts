/**
 * SSML through `tts say` (docs/cli.md §11.1), in-process against a fake SSE service that records
 * what it is asked: the request sequence (text, voice, language per request) of documents in the
 * shapes of the W3C SSML 1.1 examples, exact breaks, `--json` marks, SSML found by `--input-format`,
 * by the `.ssml` extension and by a text starting with `<speak`; and hostile documents refused
 * with exit 2 before any request, nothing written.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { runMainWith, type MainResult } from '../helpers/in-process.js';
import { deltaEvent, doneEvent, sse, startEventStream, startServer, type TestServer } from '../helpers/servers.js';

/** Frames the fake service answers per request: 0.2 s at 24000 Hz. */
const FRAMES = 4800;

describe('tts say with SSML', () => {
  let dir: string;
  let server: TestServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-ssml-'));
    server = await startServer((_req, res) => {
      startEventStream(res);
      const pcm = Buffer.alloc(FRAMES * 2);
      for (let i = 0; i < FRAMES; i++) pcm.writeInt16LE(1000 + (i % 100), i * 2);
      res.write(deltaEvent(pcm));
      res.end(doneEvent());
    });
  });
  beforeEach(() => {
    server.requests.length = 0;
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  const env = (): NodeJS.ProcessEnv => ({ HOME: dir, TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-ssml', TTS_NO_CACHE: '1' });
  const tts = (args: string[], input?: string): Promise<MainResult> => runMainWith(['say', '-q', '--voice', 'en-woman-1', ...args], env(), { input });
  /** The requests' text, voice and language, in the order they were made. */
  const asked = (): [string, string, string][] =>
    server.requests.map((r) => {
      const body = JSON.parse(r.body) as { input: string; voice: string; language: string };
      return [body.input, body.voice, body.language];
    });
  const summary = (r: MainResult): { marks?: { name: string; time: number }[]; audio_seconds: number } => JSON.parse(r.stderr.trim().split('\n').at(-1)!);
  const rawFrames = async (path: string): Promise<number> => (await readFile(path)).length / 2;

  it('an announcement (the shape of W3C §3.2.1/§3.2.3): voices, languages, breaks and marks, in order', async () => {
    const doc = join(dir, 'announcement.ssml');
    await writeFile(
      doc,
      `<?xml version="1.0" encoding="UTF-8"?>
<speak version="1.1" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en-US">
  <voice name="en-woman-1"><s>Platform four.</s></voice>
  <break time="300ms"/>
  <mark name="japanese"/>
  <voice name="ja-man-1"><s>四番線です。</s></voice>
  <break strength="strong"/>
  <s>Thank you.</s>
</speak>`,
    );
    const out = join(dir, 'announcement.raw');
    const r = await tts(['--voice', 'en-man-1', '--json', '-o', out, '-f', doc]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(asked(), [
      ['Platform four.', 'en-woman-1', 'en'],
      ['四番線です。', 'ja-man-1', 'ja'],
      ['Thank you.', 'en-man-1', 'en'],
    ]);
    // 300 ms and the strong break (800 ms) exactly, at the output rate.
    assert.equal(await rawFrames(out), 3 * FRAMES + 7200 + 19_200);
    assert.deepEqual(summary(r).marks, [{ name: 'japanese', time: Number(((FRAMES + 7200) / 24000).toFixed(3)) }]);
  });

  it('a break replaces --pause where it stands; --pause stays between other sentences', async () => {
    const out = join(dir, 'pause.raw');
    const r = await tts(['--pause', '100', '-o', out, '--input-format', 'ssml', '-f', '-'], '<speak><s>One.</s><s>Two.</s><break time="40ms"/><s>Three.</s></speak>');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await rawFrames(out), 3 * FRAMES + 2400 + 960);
  });

  it('-r 48000: a break is its exact frame count at the output rate', async () => {
    const out = join(dir, 'rate.raw');
    const r = await tts(['-r', '48000', '-o', out, '<speak>A<break time="125ms"/>B</speak>']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await rawFrames(out), 2 * 2 * FRAMES + 6000);
  });

  it('a text starting with <speak on stdin is SSML; --input-format text keeps it text', async () => {
    const ssml = '<speak>Hello <sub alias="doctor">Dr.</sub> Who</speak>';
    assert.equal((await tts(['-o', join(dir, 'stdin.raw')], ssml)).code, 0);
    assert.deepEqual(asked(), [['Hello doctor Who', 'en-woman-1', 'en']]);
    server.requests.length = 0;
    assert.equal((await tts(['--input-format', 'text', '-o', join(dir, 'text.raw')], ssml)).code, 0);
    assert.deepEqual(asked(), [[ssml, 'en-woman-1', 'en']]);
    // A prolog with a comment is SSML too, not markup read aloud; with a DOCTYPE it is refused.
    server.requests.length = 0;
    assert.equal((await tts(['-o', join(dir, 'prolog.raw')], `<?xml version="1.0"?>\n<!-- made by a tool -->\n${ssml}`)).code, 0);
    assert.deepEqual(asked(), [['Hello doctor Who', 'en-woman-1', 'en']]);
    const doctype = await tts(['-o', join(dir, 'doctype.raw')], `<!DOCTYPE speak [<!ENTITY a "x">]>\n${ssml}`);
    assert.equal(doctype.code, 2, doctype.stderr);
    assert.match(doctype.stderr, /DOCTYPE/);
  });

  it('with --subtitles, cues stay one per piece', async () => {
    const subs = join(dir, 'cues.srt');
    const r = await tts(['-o', join(dir, 'cues.raw'), '--subtitles', subs, '<speak><s>First line.</s><break time="500ms"/><s>Second line.</s></speak>']);
    assert.equal(r.code, 0, r.stderr);
    const srt = await readFile(subs, 'utf8');
    assert.match(srt, /^1\n00:00:00,000 --> 00:00:00,200\nFirst line\.\n\n2\n00:00:00,700 --> 00:00:00,900\nSecond line\.\n/u);
  });

  it('--print-text prints the spans as they will be sent, and requests nothing', async () => {
    const r = await tts(['--print-text', '<speak><s>Room <say-as interpret-as="cardinal">12</say-as>.</s><s>Ask <sub alias="doctor">Dr.</sub> Lee.</s></speak>']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.toString(), 'Room twelve.\nAsk doctor Lee.\n');
    assert.equal(server.requests.length, 0);
  });

  it('--chapters: each mark starts a chapter, in the WebVTT track, the WAV and --json', async () => {
    const vtt = join(dir, 'marks.vtt');
    const wav = join(dir, 'marks.wav');
    const r = await tts(['--input-format', 'ssml', '--json', '--chapters', vtt, '-o', wav, '<speak>Intro.<mark name="Part one"/>One.<break time="100ms"/><mark name="Part two"/>Two.</speak>']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((summary(r) as unknown as { chapters: unknown }).chapters, [
      { title: 'Opening', start: 0, end: 0.2 },
      { title: 'Part one', start: 0.2, end: 0.5 },
      { title: 'Part two', start: 0.5, end: 0.7 },
    ]);
    assert.match(await readFile(vtt, 'utf8'), /^WEBVTT\n\n1\n00:00:00\.000 --> 00:00:00\.200\nOpening\n\n2\n00:00:00\.200 --> 00:00:00\.500\nPart one\n/u);
    assert.ok((await readFile(wav)).includes(Buffer.from('cue ')), 'a cue chunk in the WAV');
  });

  it('--chapters: a mark name with line breaks names its chapter on one line (the file metadata and --json as the WebVTT track)', async () => {
    const vtt = join(dir, 'marks-lines.vtt');
    const mp3 = join(dir, 'marks-lines.mp3');
    const r = await tts(['--input-format', 'ssml', '--json', '--chapters', vtt, '-o', mp3, '<speak>Intro.<mark name="Part&#10;&#10;one &#9; here "/>One.</speak>']);
    assert.equal(r.code, 0, r.stderr);
    const chapters = (summary(r) as unknown as { chapters: { title: string }[] }).chapters;
    assert.deepEqual(chapters.map((c) => c.title), ['Opening', 'Part one here']);
    // The MP3's ID3 CHAP title frame holds the same one-line title.
    assert.ok((await readFile(mp3)).includes(Buffer.from('Part one here')), 'the one-line title in the MP3');
    assert.match(await readFile(vtt, 'utf8'), /\nPart one here\n/u);
  });

  it('--word-timings and --subtitles --words keep each span\'s voice and language (they sent every piece in the run\'s voice)', async () => {
    const doc = '<speak>Hello.<voice name="ja-man-1">東京。</voice><lang xml:lang="ja">こんにちは。</lang></speak>';
    const want: [string, string, string][] = [
      ['Hello.', 'en-woman-1', 'en'],
      ['東京。', 'ja-man-1', 'ja'],
      ['こんにちは。', 'en-woman-1', 'ja'],
    ];
    const r = await tts(['-o', join(dir, 'words.raw'), '--word-timings', join(dir, 'words.jsonl'), doc]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(asked(), want);
    server.requests.length = 0;
    const s = await tts(['-o', join(dir, 'words2.raw'), '--subtitles', join(dir, 'words2.vtt'), '--words', doc]);
    assert.equal(s.code, 0, s.stderr);
    assert.deepEqual(asked(), want);
  });

  describe('refused: exit 2, no request, nothing written', () => {
    const refused = async (name: string, doc: string, pattern: RegExp, args: string[] = []): Promise<void> => {
      const path = join(dir, `${name}.ssml`);
      await writeFile(path, doc);
      const out = join(dir, `${name}.wav`);
      const r = await tts(['-o', out, '-f', path, ...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, pattern);
      assert.equal(server.requests.length, 0);
      assert.ok(!(await readdir(dir)).some((f) => f.startsWith(name) && !f.endsWith('.ssml')), 'nothing written');
    };

    it('an unknown element, with the file, line and column', async () => {
      await refused('unknown', '<speak>\n<p>Hi <blink>there</blink></p></speak>', /unknown\.ssml:2:7: <blink> is not an SSML element tts reads/);
    });

    it('--ssml-lenient speaks it instead', async () => {
      const r = await tts(['--ssml-lenient', '-o', join(dir, 'lenient.raw'), '<speak>Hi <blink>there</blink></speak>']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(asked(), [['Hi there', 'en-woman-1', 'en']]);
    });

    it('malformed XML', async () => {
      await refused('malformed', '<speak><s>Hi</speak>', /malformed\.ssml:1:\d+: malformed SSML: unexpected close tag/);
    });

    it('billion laughs', async () => {
      const lines = ['<?xml version="1.0"?>', '<!DOCTYPE speak [', '<!ENTITY a "ha">'];
      for (let i = 1; i <= 9; i++) lines.push(`<!ENTITY a${i} "${`&a${i === 1 ? '' : i - 1};`.repeat(10)}">`);
      await refused('laughs', [...lines, ']>', '<speak>&a9;</speak>'].join('\n'), /a DOCTYPE is not allowed in SSML/);
    });

    it('an external entity', async () => {
      await refused('external', '<!DOCTYPE speak [<!ENTITY secret SYSTEM "file:///etc/hostname">]><speak>&secret;</speak>', /a DOCTYPE is not allowed in SSML/);
    });

    it('an element name of 1 MB: the message quotes its first 60 characters', async () => {
      const big = 'x'.repeat(1_000_000);
      await refused('bigname', `<speak><${big}>hi</${big}></speak>`, new RegExp(`bigname\\.ssml:1:8: <${'x'.repeat(60)}…> is not an SSML element tts reads`));
      const r = await tts(['-o', join(dir, 'bigname.wav'), '-f', join(dir, 'bigname.ssml')]);
      assert.ok(r.stderr.length < 500, `${r.stderr.length} characters on stderr`);
    });

    it('10,000 nested elements', async () => {
      await refused('nested', `<speak>${'<s>'.repeat(10_000)}x${'</s>'.repeat(10_000)}</speak>`, /elements nested deeper than 64/);
    });

    it('a document over --max-input', async () => {
      await refused('oversize', `<speak>${'Long text. '.repeat(200)}</speak>`, /max-input|larger than/i, ['--max-input', '1K']);
    });

    it('audio', async () => {
      await refused('audio', '<speak><audio src="chime.wav"/>Doors closing.</speak>', /<audio> is not supported: tts fetches no audio/);
    });

    it('SSML with --lines', async () => {
      const r = await tts(['--lines', '--input-format', 'ssml']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--lines reads plain text; it cannot read SSML/);
    });
  });

  describe('tts batch reads SSML as tts say does (docs/cli.md §9, §11.1)', () => {
    const batch = (jobs: object[], extra: string[] = []): Promise<MainResult> =>
      runMainWith(['batch', '-', '-q', '--voice', 'en-woman-1', '--output-dir', join(dir, 'batch'), ...extra], env(), { input: jobs.map((j) => JSON.stringify(j)).join('\n') });

    it('a job whose text starts with <speak, and a .ssml file, are read as SSML: the requests of the same say run', async () => {
      const doc = '<speak>Hello <break time="300ms"/><voice name="ja-man-1">東京。</voice></speak>';
      await writeFile(join(dir, 'job.ssml'), doc);
      const r = await batch([
        { text: doc, output: 'a.raw' },
        { file: join(dir, 'job.ssml'), output: 'b.raw' },
      ], ['--jobs', '1']);
      assert.equal(r.code, 0, r.stderr);
      const want: [string, string, string][] = [
        ['Hello', 'en-woman-1', 'en'],
        ['東京。', 'ja-man-1', 'ja'],
      ];
      assert.deepEqual(asked(), [...want, ...want]);
      // The break is audio as on say: two pieces and 300 ms at 24000 Hz.
      assert.equal(await rawFrames(join(dir, 'batch', 'a.raw')), 2 * FRAMES + 7200);
      assert.equal(await rawFrames(join(dir, 'batch', 'b.raw')), 2 * FRAMES + 7200);
    });

    it('a bad SSML job fails alone with exit 2 and its place; the others run', async () => {
      const r = await batch([
        { text: '<speak>Hi <whisper>there</whisper></speak>', output: 'bad.raw' },
        { text: 'Plain.', output: 'ok.raw' },
      ], ['--jobs', '1']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /line 1: error: .*<whisper> is not an SSML element/);
      assert.deepEqual(asked(), [['Plain.', 'en-woman-1', 'en']]);
      await assert.rejects(readFile(join(dir, 'batch', 'bad.raw')));
    });

    it('a job file that stream reads as a document or a script (.md, .script.txt) is refused with exit 2, nothing requested', async () => {
      await writeFile(join(dir, 'notes.md'), '# Title\n\nSome *text*.\n');
      await writeFile(join(dir, 'talk.script.txt'), 'Alice: Hello.\n');
      const r = await batch([
        { file: join(dir, 'notes.md'), output: 'md.raw' },
        { file: join(dir, 'talk.script.txt'), output: 'script.raw' },
      ]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /line 1: error: .*notes\.md is a markdown document/);
      assert.match(r.stderr, /line 2: error: .*talk\.script\.txt is a dialogue script/);
      assert.deepEqual(asked(), []);
    });
  });
});

describe('word timings of a document of many tiny spans (docs/cli.md §12.1)', () => {
  let dir: string;
  let server: TestServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-ssml-words-'));
    // Each request's audio is 0.01 s, with a timing for each word of its input (the built-in service's extension).
    server = await startServer((_req, res, body) => {
      const input = (JSON.parse(body) as { input: string }).input;
      const words = [...input.matchAll(/\S+/gu)].map((m, i, all) => ({ text: m[0], start: Math.floor((i * 240) / all.length), end: Math.floor(((i + 1) * 240) / all.length), charStart: m.index, charEnd: m.index + m[0].length }));
      startEventStream(res);
      res.write(deltaEvent(Buffer.alloc(480, 1)));
      res.end(sse('done', { type: 'speech.audio.done', item_id: 'item_test', words }));
    });
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('char_start and char_end are each word\'s place in the spans\' text, also with --max-chars 300000 (more pieces ahead than the offsets were kept for)', async () => {
    const doc = `<speak>${Array.from({ length: 1500 }, (_, i) => `<s>w${i}</s>`).join('')}</speak>`;
    const text = [...Array.from({ length: 1500 }, (_, i) => `w${i}`).join('')];
    for (const maxChars of ['1000', '300000']) {
      const out = join(dir, `words-${maxChars}.jsonl`);
      const r = await runMainWith(['stream', '-q', '--voice', 'en-woman-1', '--max-chars', maxChars, '-o', join(dir, 'words.raw'), '--word-timings', out, doc], { HOME: dir, TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-ssml', TTS_NO_CACHE: '1' });
      assert.equal(r.code, 0, r.stderr);
      const lines = (await readFile(out, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { word: string; char_start: number; char_end: number });
      assert.equal(lines.length, 1500);
      const misplaced = lines.filter((w) => text.slice(w.char_start, w.char_end).join('') !== w.word);
      assert.deepEqual(misplaced.slice(0, 3), [], `--max-chars ${maxChars}: ${misplaced.length} of 1500 words misplaced`);
    }
  });
});
