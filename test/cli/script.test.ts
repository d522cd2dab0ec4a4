/**
 * Dialogue scripts through the command line (docs/cli.md §11.2), in-process through `main`:
 * three speakers × 20 short lines through the built-in engine — every turn in its speaker's
 * voice (the F0 of each turn, by YIN from `pitchfinder`), subtitles in order with the speaker,
 * `--json` turns, one file, and a second run all cache hits with identical bytes —; `[voices]`
 * from the config file and its profile under `--cast`; an unknown speaker and a 1 MB script are
 * exit 2 with nothing written.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Pitchfinder from 'pitchfinder';
import { type TestServer, startPatternServer } from '../helpers/servers.js';
import { runMainWith, type MainResult } from '../helpers/in-process.js';

const RATE = 24000;

/** Median F0 in Hz of 16-bit mono PCM at {@link RATE} (YIN on 1024-sample frames, hop 512; unvoiced frames left out). */
function medianF0(pcm: Buffer): number {
  const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1);
  const x = Float32Array.from(samples, (s) => s / 32768);
  const yin = Pitchfinder.YIN({ sampleRate: RATE });
  const f0s: number[] = [];
  for (let i = 0; i + 1024 <= x.length; i += 512) {
    const f = yin(x.subarray(i, i + 1024));
    if (f !== null && f > 60 && f < 400) f0s.push(f);
  }
  f0s.sort((a, b) => a - b);
  return f0s[f0s.length >> 1] ?? Number.NaN;
}

/** The PCM data of a 44-byte-header WAV file as this tool writes it. */
const pcmOf = (wav: Buffer): Buffer => wav.subarray(44);

const CAST = 'Alice=en-woman-1,Bob=en-man-1,Kenji=ja-man-1';
const LINES: Record<string, string[]> = {
  Alice: ['Good morning, Bob.', 'The train is late again.', 'I brought some coffee.', 'Do you want a cup?', 'It is still warm.'],
  Bob: ['Morning, Alice.', 'It was late yesterday too.', 'Thank you so much.', 'Yes, please.', 'That is very kind.'],
  Kenji: ['おはようございます。', '電車がまた遅れています。', 'お茶を持ってきました。', '一緒に飲みましょう。', 'とても温かいです。'],
};
const SPEAKERS = ['Alice', 'Bob', 'Kenji'] as const;
/** 3 speakers × 20 lines, in turn. */
const TURNS = Array.from({ length: 60 }, (_, i) => ({ speaker: SPEAKERS[i % 3]!, text: LINES[SPEAKERS[i % 3]!]![Math.floor(i / 3) % 5]! }));
const VOICE: Record<string, string> = { Alice: 'en-woman-1', Bob: 'en-man-1', Kenji: 'ja-man-1' };

describe('dialogue scripts', () => {
  let home: string;
  const env = (): NodeJS.ProcessEnv => ({ HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), XDG_CACHE_HOME: join(home, 'cache'), PATH: process.env['PATH'] });
  const run = (argv: string[], input?: string): Promise<MainResult> => runMainWith(argv, env(), { input, timeoutMs: 120_000 });
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-script-'));
    await mkdir(join(home, 'xdg', 'tts'), { recursive: true });
    await writeFile(join(home, 'dialogue.script.txt'), TURNS.map((t) => `${t.speaker}${t.speaker === 'Kenji' ? '：' : ': '}${t.text}`).join('\n') + '\n');
  });
  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('speaks 3 speakers × 20 lines, each turn in its voice, subtitles with the speaker, one file, resumable from the cache', async () => {
    const out = join(home, 'dialogue.wav');
    const vtt = join(home, 'dialogue.vtt');
    const first = await run(['say', '--offline', '-q', '--json', '-f', join(home, 'dialogue.script.txt'), '--cast', CAST, '-o', out, '--subtitles', vtt]);
    assert.equal(first.code, 0, first.stderr);
    const summary = JSON.parse(first.stderr.trim().split('\n').pop()!) as { turns: { speaker: string; voice: string; start: number; end: number }[]; cache_hits: number; requests: number };
    assert.deepEqual(
      summary.turns.map((t) => [t.speaker, t.voice]),
      TURNS.map((t) => [t.speaker, VOICE[t.speaker]]),
    );
    // Turns in order, apart by the default turn gap of 400 ms (docs/cli.md §11.2).
    for (let i = 1; i < summary.turns.length; i++) assert.ok(Math.abs(summary.turns[i]!.start - summary.turns[i - 1]!.end - 0.4) < 0.002, `gap before turn ${i + 1}`);
    // Every turn's F0 in its voice's band: en-woman-1 (Flite slt) about 170 Hz, en-man-1 (Flite rms)
    // about 110 Hz, ja-man-1 (eSpeak NG ja) about 97 Hz; a turn in another speaker's voice — or in
    // the run's --voice, as if the cast were ignored — falls into another band.
    const pcm = pcmOf(await readFile(out));
    const f0 = summary.turns.map((t) => medianF0(pcm.subarray(Math.round(t.start * RATE) * 2, Math.round(t.end * RATE) * 2)));
    const bands = SPEAKERS.map((s) => {
      const mine = f0.filter((_, i) => TURNS[i]!.speaker === s);
      return { speaker: s, low: Math.min(...mine), high: Math.max(...mine) };
    });
    // The bands are apart: each speaker's turns all lie outside the others' ranges.
    const [alice, bob, kenji] = bands as [(typeof bands)[0], (typeof bands)[0], (typeof bands)[0]];
    assert.ok(kenji.high < bob.low && bob.high < alice.low, `F0 bands overlap: ${JSON.stringify(bands)}`);
    // Subtitles: one cue per turn (a turn is one short sentence), in order, with its speaker.
    const cues = (await readFile(vtt, 'utf8')).split('\n').filter((l) => l.startsWith('<v '));
    assert.deepEqual(cues, TURNS.map((t) => `<v ${t.speaker}>${t.text}`));
    // A second run (as after Ctrl-C) is all cache hits, and the file is byte for byte the same.
    const again = await run(['say', '--offline', '-q', '--json', '-f', join(home, 'dialogue.script.txt'), '--cast', CAST, '-o', join(home, 'again.wav')]);
    assert.equal(again.code, 0, again.stderr);
    const second = JSON.parse(again.stderr.trim().split('\n').pop()!) as { cache_hits: number; requests: number };
    assert.equal(second.requests, 0);
    assert.equal(second.cache_hits, 60);
    assert.ok((await readFile(join(home, 'again.wav'))).equals(await readFile(out)), 'the resumed file differs');
  });

  describe('voices and refusals (a fake service records the requests)', () => {
    let server: TestServer;
    before(async () => {
      server = await startPatternServer(4800);
    });
    after(async () => server.close());
    const served = (argv: string[], input?: string): Promise<MainResult> =>
      runMainWith(argv, { ...env(), TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-script', TTS_NO_CACHE: '1' }, { input });
    /** [voice, language, text] of the requests since `from`. */
    const sent = (from: number): string[][] =>
      server.requests.slice(from).map((r) => {
        const body = JSON.parse(r.body) as { voice: string; language: string; input: string };
        return [body.voice, body.language, body.input];
      });

    it('takes voices from [voices], a profile\'s [profile.NAME.voices] over it, and --cast over both; the lexicon by each turn\'s language', async () => {
      await writeFile(join(home, 'xdg', 'tts', 'config.toml'), '[voices]\nAlice = "en-woman-1"\nBob = "en-man-1"\n\n[profile.jp.voices]\nBob = "ja-man-1"\n');
      await writeFile(join(home, 'xdg', 'tts', 'lexicon.toml'), '[en]\n"SQL" = "sequel"\n[ja]\n"SQL" = "エスキューエル"\n');
      const script = 'Alice: I like SQL.\nBob: SQL is fine.\n';
      try {
        let from = server.requests.length;
        const plain = await served(['say', '--input-format', 'script', '-o', join(home, 'v1.wav')], script);
        assert.equal(plain.code, 0, plain.stderr);
        assert.deepEqual(sent(from), [['en-woman-1', 'en', 'I like sequel.'], ['en-man-1', 'en', 'sequel is fine.']]);
        from = server.requests.length;
        const profile = await served(['say', '--profile', 'jp', '--input-format', 'script', '-o', join(home, 'v2.wav')], script);
        assert.equal(profile.code, 0, profile.stderr);
        assert.deepEqual(sent(from), [['en-woman-1', 'en', 'I like sequel.'], ['ja-man-1', 'ja', 'エスキューエル is fine.']]);
        from = server.requests.length;
        const flag = await served(['say', '--profile', 'jp', '--cast', 'Bob=en-woman-1', '--input-format', 'script', '-o', join(home, 'v3.wav')], script);
        assert.equal(flag.code, 0, flag.stderr);
        assert.deepEqual(sent(from).map((r) => r[0]), ['en-woman-1', 'en-woman-1']);
      } finally {
        await rm(join(home, 'xdg', 'tts', 'config.toml'));
        await rm(join(home, 'xdg', 'tts', 'lexicon.toml'));
      }
    });
    it('an unknown speaker is exit 2 naming the missing and the known names, before anything is requested or written', async () => {
      const from = server.requests.length;
      const out = join(home, 'unknown.wav');
      const r = await served(['say', '--input-format', 'script', '--cast', 'Alice=en-woman-1', '-o', out], 'Alice: Hi.\nBob: Hello.\nCarol: Hey.\n');
      assert.equal(r.code, 2);
      assert.match(r.stderr, /no voice for "Bob", "Carol" in the script/);
      assert.match(r.stderr, /voices are set for "Alice"/);
      assert.equal(server.requests.length, from);
      assert.equal(existsSync(out), false);
    });
    it('a 1 MB script is refused by the turn cap (exit 2) with nothing requested or written', async () => {
      const line = 'Alice: Hello there, this is a line.\n';
      const big = line.repeat(Math.ceil(1_000_000 / line.length));
      const from = server.requests.length;
      const out = join(home, 'big.wav');
      const r = await served(['say', '--input-format', 'script', '--cast', 'Alice=en-woman-1', '-o', out], big);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /standard input:10001: more than 10000 turns in one script/);
      assert.equal(server.requests.length, from);
      assert.equal(existsSync(out), false);
    });
    it('--cast for an input that is not a script is exit 2', async () => {
      const r = await served(['say', '--cast', 'Alice=en-woman-1', '-o', join(home, 'x.wav'), 'Hello.']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--cast gives the voices of a dialogue script/);
    });
    it('--lines and the chapter flags with a script are exit 2', async () => {
      const lines = await served(['say', '--input-format', 'script', '--lines', '--cast', 'A=en-man-1', '-o', join(home, 'y.wav')], 'A: hi\n');
      assert.equal(lines.code, 2);
      assert.match(lines.stderr, /--lines reads plain text; it cannot read a dialogue script/);
      const chapters = await served(['say', '--input-format', 'script', '--chapters', join(home, 'c.vtt'), '--cast', 'A=en-man-1', '-o', join(home, 'y.wav')], 'A: hi\n');
      assert.equal(chapters.code, 2);
      assert.match(chapters.stderr, /--chapters needs a document .*the input is a dialogue script/);
    });
  });
});
