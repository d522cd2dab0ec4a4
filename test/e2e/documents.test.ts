/**
 * Documents end to end with the built-in engine (docs/cli.md §10): a real README (commander's)
 * and a real EPUB (Debian's ubuntu-packaging-guide-epub) read without markup, chapters named as
 * the headings and the table of contents say, timed within the audio and read back by ffprobe;
 * a run resumed after Ctrl-C writes the same bytes; hostile documents are refused (exit 2) with
 * nothing written. Runs are in-process against one built-in server (one engine start), but for
 * the run stopped by a real Ctrl-C, which is the binary with its own embedded engine.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, watch, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { Parser } from 'htmlparser2';
import { freshCacheHome, runTts } from '../helpers/cli.js';
import { runTtsInProcess, startServeInProcess, type InProcessServe } from '../helpers/in-process.js';
import { which } from '../helpers/engine-audio.js';

const GUIDE = '/usr/share/doc/ubuntu-packaging-guide-epub/ubuntu-packaging-guide.epub';
const README = join(dirname(createRequire(import.meta.url).resolve('commander')), 'Readme.md');
/** Markdown and HTML syntax that must never be spoken. */
const MARKUP = /`|\*\*|__|\]\(|<!--|^#|^\||\|-{3}|https?:\/\/|!\[|<\/?(p|div|span|a|img|br|li|code|pre)\b[^>]*>|&(nbsp|amp|quot);/u;

interface Summary {
  ok: boolean;
  audio_seconds: number;
  cache_hits: number;
  requests: number;
  chapters?: { title: string; start: number; end: number }[];
}
const summaryOf = (stderr: string): Summary => JSON.parse(stderr.trim().split('\n').at(-1)!) as Summary;

/** Chapter names and starts as ffprobe reads them from a file. */
function probeChapters(path: string): { title: string; start: number }[] {
  const out = execFileSync('ffprobe', ['-v', 'error', '-show_chapters', '-of', 'json', path], { encoding: 'utf8' });
  return (JSON.parse(out) as { chapters: { start_time: string; tags?: { title?: string } }[] }).chapters.map((c) => ({ title: c.tags?.title ?? '', start: Number(c.start_time) }));
}

/** The chapter names `--print-text --verbose` lists (`tts: chapter N: title`). */
function listedChapters(stderr: string): string[] {
  return [...stderr.matchAll(/^tts: chapter \d+: (.*)$/gmu)].map((m) => m[1]!);
}

/** Checks the chapters of a run's summary: names, increasing times within the audio. */
function checkTimes(s: Summary, names: string[]): void {
  assert.deepEqual(s.chapters?.map((c) => c.title), names);
  let last = -1;
  for (const c of s.chapters!) {
    assert.ok(c.start > last && c.start < c.end && c.end <= s.audio_seconds + 1e-3, `${JSON.stringify(c)} in ${s.audio_seconds} s`);
    last = c.start;
  }
}

/** The top-level entries of the guide's EPUB 3 table of contents, read here independently. */
function guideToc(): string[] {
  const nav = new TextDecoder().decode(unzipSync(new Uint8Array(readFileSync(GUIDE)), { filter: (f) => f.name === 'nav.xhtml' })['nav.xhtml']!);
  const names: string[] = [];
  let depth = 0;
  let text: string | undefined;
  const parser = new Parser(
    {
      onopentag: (n) => {
        if (n === 'ol') depth++;
        if (n === 'a' && depth === 1) text = '';
      },
      ontext: (t) => {
        if (text !== undefined) text += t;
      },
      onclosetag: (n) => {
        if (n === 'ol') depth--;
        if (n === 'a' && text !== undefined) {
          names.push(text.replace(/\s+/gu, ' ').trim());
          text = undefined;
        }
      },
    },
    { xmlMode: true },
  );
  parser.end(nav);
  return names;
}

const KEY = 'documents-test-key-0123456789';

describe('documents end to end', () => {
  let dir: string;
  let cache: string;
  let srv: InProcessServe;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-docs-'));
    cache = freshCacheHome();
    srv = await startServeInProcess(['--port', '0', '--rate-limit', '100000/min', '--workers', '1'], { TTS_SERVER_API_KEYS: KEY });
  });
  after(async () => {
    await srv.stop();
    await rm(dir, { recursive: true, force: true });
  });
  /** One cache for the file (the same pieces are asked once), the file's built-in server. */
  const env = (): Record<string, string> => ({ XDG_CACHE_HOME: cache, TTS_BASE_URL: srv.base, TTS_API_KEY: KEY });

  it('a real README: --print-text speaks no markup, one sentence per line', async () => {
    const r = await runTtsInProcess(['--print-text', '--verbose', '-f', README], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.toString('utf8').trim().split('\n');
    assert.ok(lines.length > 150, `${lines.length} lines`);
    assert.deepEqual(lines.filter((l) => MARKUP.test(l)), []);
    assert.match(r.stderr, /code block\(s\) not read/);
    assert.ok(listedChapters(r.stderr).length >= 5);
  });

  it('a real README: chapters 2-4 in MP3, Ogg Opus and FLAC, named by the headings, read back by ffprobe', async (t) => {
    if ((await which('ffprobe')) === undefined) return t.skip('ffprobe is not installed (apt-get install ffmpeg)');
    const listed = listedChapters((await runTtsInProcess(['--print-text', '--verbose', '-f', README], { env: env() })).stderr).slice(1, 4);
    for (const ext of ['mp3', 'ogg', 'flac']) {
      const out = join(dir, `readme.${ext}`);
      const vtt = join(dir, `readme-${ext}.vtt`);
      const r = await runTtsInProcess(['stream', '-v', 'en-woman-1', '-f', README, '--chapter-range', '2-4', '-o', out, '--chapters', vtt, '--json'], { env: env(), timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.stderr);
      const s = summaryOf(r.stderr);
      checkTimes(s, listed);
      const probed = probeChapters(out);
      assert.deepEqual(probed.map((c) => c.title), listed, ext);
      probed.forEach((c, i) => assert.ok(Math.abs(c.start - s.chapters![i]!.start) < 0.01, `${ext}: ${c.start} vs ${s.chapters![i]!.start}`));
      const track = await readFile(vtt, 'utf8');
      assert.equal(track.match(/-->/gu)?.length, 3);
      if (ext !== 'mp3') assert.ok(s.cache_hits > 0 && s.requests === 0, 'the same pieces, from the cache: chapters do not change what is sent');
    }
  });

  it('a real EPUB: chapters equal its table of contents; two chapters timed and read back', async (t) => {
    if (!existsSync(GUIDE)) return t.skip('ubuntu-packaging-guide-epub is not installed (apt-get install ubuntu-packaging-guide-epub)');
    if ((await which('ffprobe')) === undefined) return t.skip('ffprobe is not installed (apt-get install ffmpeg)');
    const toc = guideToc();
    const p = await runTtsInProcess(['--print-text', '--verbose', '-f', GUIDE], { env: env() });
    assert.equal(p.code, 0, p.stderr);
    assert.deepEqual(listedChapters(p.stderr), toc);
    // (`#ubuntu-devel` is an IRC channel in the book's words: `#` is Markdown's heading mark only.)
    assert.deepEqual(p.stdout.toString('utf8').split('\n').filter((l) => MARKUP.test(l.replace(/^#/u, ''))), []);
    const out = join(dir, 'guide.ogg');
    const r = await runTtsInProcess(['stream', '-v', 'en-man-1', '-f', GUIDE, '--chapter-range', '10-11', '-o', out, '--json'], { env: env(), timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    checkTimes(summaryOf(r.stderr), toc.slice(9, 11));
    assert.deepEqual(probeChapters(out).map((c) => c.title), toc.slice(9, 11));
  });

  it('--split-chapters: one numbered, tagged file per chapter', async (t) => {
    if (!existsSync(GUIDE)) return t.skip('ubuntu-packaging-guide-epub is not installed');
    if ((await which('ffprobe')) === undefined) return t.skip('ffprobe is not installed (apt-get install ffmpeg)');
    const split = join(dir, 'split');
    const r = await runTtsInProcess(['stream', '-v', 'en-man-1', '-f', GUIDE, '--chapter-range', '10-11', '--split-chapters', split, '--json'], { env: env(), timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    const files = (await readdir(split)).sort();
    assert.deepEqual(files, ['10 Backporting software updates.mp3', '11 Communication in Ubuntu Development.mp3']);
    const tags = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_format', '-of', 'json', join(split, files[1]!)], { encoding: 'utf8' })) as { format: { tags: Record<string, string> } };
    assert.equal(tags.format.tags.title, 'Communication in Ubuntu Development');
    assert.equal(tags.format.tags.album, 'Ubuntu Packaging Guide');
    assert.equal(tags.format.tags.track, '11');
  });

  it('a run resumed after Ctrl-C writes the same bytes as a clean run', async (t) => {
    if (!existsSync(GUIDE)) return t.skip('ubuntu-packaging-guide-epub is not installed');
    const args = (out: string): string[] => ['stream', '-v', 'en-woman-1', '--max-chars', '150', '--concurrency', '1', '-f', GUIDE, '--chapter-range', '11', '-o', out, '--json'];
    const clean = join(dir, 'clean.flac');
    const rc = await runTtsInProcess(args(clean), { env: { XDG_CACHE_HOME: freshCacheHome() }, timeoutMs: 120_000 });
    assert.equal(rc.code, 0, rc.stderr);
    const home = freshCacheHome();
    const pieces = join(home, 'tts', 'pieces');
    mkdirSync(pieces, { recursive: true, mode: 0o700 });
    const out = join(dir, 'resumed.flac');
    // A process: it gets a real SIGINT (its clean twin runs in-process: only its bytes count).
    const r1 = await runTts(args(out), {
      env: { XDG_CACHE_HOME: home },
      timeoutMs: 120_000,
      // Ctrl-C once the third piece is stored in the cache (the event, not a delay).
      onSpawn: (child) => {
        const seen = new Set<string>();
        const watcher = watch(pieces, (_e, name) => {
          if (name !== null && !name.endsWith('.tmp')) seen.add(name);
          if (seen.size >= 3) {
            watcher.close();
            child.kill('SIGINT');
          }
        });
        child.on('exit', () => watcher.close());
      },
    });
    assert.equal(r1.code, 130, r1.stderr);
    assert.match(r1.stderr, /stopped in chapter 11: Communication in Ubuntu Development/);
    assert.equal(existsSync(out), false, 'an interrupted run left its output');
    // The resumption is a process too: the built-in engine's cache identity hashes the code that
    // makes the audio as it is built (src/cache/identity.ts), and bin/tts.js runs the bundle while
    // an in-process run runs dist/src — two builds of one source, each with its own identity.
    const r2 = await runTts(args(out), { env: { XDG_CACHE_HOME: home }, timeoutMs: 120_000 });
    assert.equal(r2.code, 0, r2.stderr);
    assert.ok(summaryOf(r2.stderr).cache_hits >= 3, r2.stderr);
    assert.ok((await readFile(out)).equals(await readFile(clean)), 'the resumed file differs from a clean run');
  });

  it('--split-chapters never writes over its input, nor one --subtitles/--word-timings/--chapters file per chapter over the last: exit 2, nothing written', async () => {
    const split = join(dir, 'split-self');
    mkdirSync(split, { recursive: true });
    const input = join(split, '01 Intro.mp3');
    const markdown = '# Intro\n\nHello there.\n\n# Two\n\nMore.\n';
    writeFileSync(input, markdown);
    const self = await runTtsInProcess(['stream', '-f', input, '--input-format', 'markdown', '--split-chapters', split], { env: env() });
    assert.equal(self.code, 2, self.stderr);
    assert.match(self.stderr, /--split-chapters .*01 Intro\.mp3 is the file the text is read from/);
    assert.equal(readFileSync(input, 'utf8'), markdown);
    assert.deepEqual(await readdir(split), ['01 Intro.mp3']);
    const md = join(dir, 'two-chapters.md');
    writeFileSync(md, markdown);
    for (const [flag, name] of [['--subtitles', 'all.vtt'], ['--word-timings', 'all.jsonl'], ['--chapters', 'all.vtt']] as const) {
      const r = await runTtsInProcess(['stream', '-f', md, '--split-chapters', join(dir, 'split-per'), flag, join(dir, name)], { env: env() });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`${flag} .*--split-chapters`));
      assert.equal(existsSync(join(dir, name)) || existsSync(join(dir, 'split-per')), false);
    }
    // Flags each chapter's run would refuse are refused before the folder is made (it was left
    // behind, empty, by the first chapter's refusal).
    for (const [flags, message] of [
      [['--words'], /--words times the words of the --subtitles file/],
      [['-c', '3'], /MP3 holds 1 or 2 channels, not 3/],
      [['--bitrate', '7'], /--bitrate 7 is not an MP3 bit rate/],
      [['--wav', '--container', 'flac'], /--container flac contradicts --wav/],
      [['--cast', 'A=en-man-1'], /--cast gives the voices of a dialogue script/],
    ] as const) {
      const folder = join(dir, 'split-refused');
      const r = await runTtsInProcess(['stream', '-f', md, '--split-chapters', folder, ...flags], { env: env() });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(existsSync(folder), false, `${flags.join(' ')}: the folder is not made`);
    }
  });

  it('a chapter\'s first sentence starts a sentence: --pause before it, a cue of its own, word offsets past a line break', async () => {
    // Chapter texts are trimmed: "there." and "Second part" joined with nothing between would be
    // one sentence (UAX #29), with no pause and one cue.
    const md = join(dir, 'pause-chapters.md');
    writeFileSync(md, '# Chap one\n\nHello there.\n\n## Second part\n\nMore text here.\n');
    const srt = join(dir, 'pause-chapters.srt');
    const words = join(dir, 'pause-chapters.jsonl');
    const r = await runTtsInProcess(['stream', '-f', md, '--pause', '1000', '--subtitles', srt, '--word-timings', words, '-o', join(dir, 'pause-chapters.wav')], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const cues = [...readFileSync(srt, 'utf8').matchAll(/^(\d\d):(\d\d):(\d\d),(\d{3}) --> (\d\d):(\d\d):(\d\d),(\d{3})\n(.*)$/gmu)].map((m) => {
      const t = (i: number): number => Number(m[i]) * 3600 + Number(m[i + 1]) * 60 + Number(m[i + 2]) + Number(m[i + 3]) / 1000;
      return { start: t(1), end: t(5), text: m[9]! };
    });
    assert.deepEqual(cues.map((c) => c.text), ['Chap one.', 'Hello there.', 'Second part.', 'More text here.']);
    for (let i = 1; i < cues.length; i++) assert.ok(cues[i]!.start - cues[i - 1]!.end >= 0.99, `${JSON.stringify(cues[i - 1])} → ${JSON.stringify(cues[i])}`);
    // Offsets in the spoken text: the chapters' texts with a line break between two.
    const spoken = 'Chap one.\n\nHello there.\nSecond part.\n\nMore text here.';
    const listed = readFileSync(words, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { word: string; char_start: number; char_end: number });
    assert.ok(listed.length >= 8, JSON.stringify(listed));
    for (const w of listed) assert.equal(spoken.slice(w.char_start, w.char_end), w.word, JSON.stringify(w));
  });

  it('--chapters naming the document through a symbolic link is exit 2, the document untouched (compared by inode, as -o is)', async () => {
    const md = join(dir, 'linked.md');
    const markdown = '# A\n\nHello.\n';
    writeFileSync(md, markdown);
    const link = join(dir, 'linked.vtt');
    symlinkSync(md, link);
    const r = await runTtsInProcess(['stream', '-f', md, '-o', join(dir, 'linked.wav'), '--chapters', link], { env: env() });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--chapters .*linked\.vtt is the file the text is read from/);
    assert.equal(readFileSync(md, 'utf8'), markdown);
    assert.equal(existsSync(join(dir, 'linked.wav')), false);
  });

  it('chapter flags where they would do nothing are exit 2: on plain text, on a batch', async () => {
    const text = await runTtsInProcess(['stream', '--chapters', join(dir, 'x.vtt'), '-o', join(dir, 'x.wav'), 'hello'], { env: env() });
    assert.equal(text.code, 2, text.stderr);
    assert.match(text.stderr, /--chapters needs a document/);
    const jobs = join(dir, 'jobs.jsonl');
    writeFileSync(jobs, '{"text":"hi","output":"a.wav"}\n');
    const batch = await runTtsInProcess(['batch', jobs, '--output-dir', join(dir, 'out'), '--split-chapters', join(dir, 'split2')], { env: env() });
    assert.equal(batch.code, 2, batch.stderr);
    assert.match(batch.stderr, /--split-chapters is not a batch flag/);
    assert.equal(existsSync(join(dir, 'x.wav')) || existsSync(join(dir, 'out')), false);
  });

  describe('hostile documents: exit 2, a clear message, nothing written', () => {
    const refused = async (file: string, pattern: RegExp): Promise<void> => {
      const out = join(dir, 'hostile.mp3');
      const r = await runTtsInProcess(['stream', '-f', file, '-o', out, '--chapters', join(dir, 'hostile.vtt')], { env: env(), timeoutMs: 30_000 });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, pattern);
      assert.equal(existsSync(out), false);
      assert.equal(existsSync(join(dir, 'hostile.vtt')), false);
      assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith('.tmp')), []);
    };
    const container = '<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>';
    const opf = '<package><manifest><item id="a" href="a.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="a"/></spine></package>';

    it('a zip bomb EPUB', async () => {
      const path = join(dir, 'bomb.epub');
      writeFileSync(path, zipSync({ 'META-INF/container.xml': strToU8(container), 'content.opf': strToU8(opf), 'a.xhtml': new Uint8Array(15 * 1024 * 1024).fill(0x61) }));
      await refused(path, /zip bomb/);
    });

    it('an EPUB whose paths escape the archive', async () => {
      const path = join(dir, 'escape.epub');
      writeFileSync(path, zipSync({ 'META-INF/container.xml': strToU8(container), 'content.opf': strToU8(opf.replace('a.xhtml', '../../../etc/passwd')), '../x.xhtml': strToU8('x') }));
      await refused(path, /invalid relative path|outside the book/);
    });

    it('deeply nested HTML', async () => {
      const path = join(dir, 'deep.html');
      writeFileSync(path, `${'<div>'.repeat(200_000)}deep${'</div>'.repeat(200_000)}`);
      await refused(path, /nests elements more than 256 deep/);
    });

    it('a 50 MB Markdown file, refused before it is read', async () => {
      const path = join(dir, 'big.md');
      writeFileSync(path, Buffer.alloc(50 * 1024 * 1024, 'word '));
      await refused(path, /larger than a document may be/);
    });
  });
});
