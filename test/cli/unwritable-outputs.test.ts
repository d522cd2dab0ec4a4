/**
 * Outputs a shell's `>` could not write (docs/cli.md §2, §3): the atomic writer renames a new file
 * over the target, which asks the folder's permission, not the file's; so a file this user may
 * not write is refused by its own permission first, for `-o` and every side output, before any
 * request (exit 7), the file kept. Spawned as another user (nobody) when the tests run as root,
 * since root may write any file, as with the shell.
 */
import assert from 'node:assert/strict';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTts, type CliResult } from '../helpers/cli.js';
import { startPatternServer, type TestServer } from '../helpers/servers.js';

/** nobody's user and group id (Debian, Ubuntu, Alpine). */
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

describe('an output file this user may not write', () => {
  let dir: string;
  let server: TestServer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-unwritable-'));
    // The folder is the user's own (nobody's, when root runs the tests): only the files refuse.
    if (asRoot) await chown(dir, NOBODY, NOBODY);
    server = await startPatternServer(4800);
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Makes `name` in the folder, the user's own, with `text` and `mode`. */
  async function file(name: string, text: string, mode: number): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, text);
    if (asRoot) await chown(path, NOBODY, NOBODY);
    await chmod(path, mode);
    return path;
  }

  /** Runs tts as the user the files belong to (nobody when root runs the tests). */
  function tts(args: string[]): Promise<CliResult> {
    return runTts(args, {
      cwd: dir,
      env: { TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-unwritable', HOME: dir, XDG_CONFIG_HOME: dir, XDG_CACHE_HOME: dir },
      prefix: asRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'] : [],
    });
  }

  it('-o, --subtitles, --word-timings and --chapters naming a read-only file (0444): exit 7 "permission denied" before any request, the file kept as it was', async () => {
    const doc = await file('doc.md', '# One\n\nHello there.\n\n# Two\n\nGood bye.\n', 0o644);
    const cases: [string, string[]][] = [
      ['ro.wav', ['-o', 'ro.wav', 'Hello there.']],
      ['ro.srt', ['-o', 'a.wav', '--subtitles', 'ro.srt', 'Hello there.']],
      ['ro.jsonl', ['-o', 'a.wav', '--word-timings', 'ro.jsonl', 'Hello there.']],
      ['ro.vtt', ['-o', 'a.wav', '-f', doc, '--chapters', 'ro.vtt']],
    ];
    for (const [name, args] of cases) {
      const path = await file(name, 'precious\n', 0o444);
      server.requests.length = 0;
      const r = await tts(['stream', '--no-cache', ...args]);
      assert.equal(r.code, 7, `${name}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`${name.replace('.', '\\.')}.*permission denied`), name);
      assert.doesNotMatch(r.stderr, /internal error/);
      assert.equal(server.requests.length, 0, `${name}: no request`);
      assert.equal(await readFile(path, 'utf8'), 'precious\n', `${name} kept`);
      assert.equal((await stat(path)).mode & 0o777, 0o444);
    }
  });

  it('--split-chapters into a folder where a later chapter\'s file is read-only: exit 7 before the first chapter is requested', async () => {
    const doc = await file('book.md', '# One\n\nHello there.\n\n# Two\n\nGood bye.\n', 0o644);
    const chapters = join(dir, 'chapters');
    await mkdir(chapters);
    if (asRoot) await chown(chapters, NOBODY, NOBODY);
    const path = await file(join('chapters', '02 Two.wav'), 'precious\n', 0o444);
    server.requests.length = 0;
    const r = await tts(['stream', '--no-cache', '-f', doc, '--split-chapters', chapters, '--wav']);
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /02 Two\.wav.*permission denied/);
    assert.equal(server.requests.length, 0, 'no request');
    assert.equal(await readFile(path, 'utf8'), 'precious\n');
  });

  it('a batch line whose output is read-only fails (exit 7) without a request of its own; the other lines are written', async () => {
    const path = await file('ro-batch.wav', 'precious\n', 0o444);
    const jobs = await file('jobs.jsonl', `${JSON.stringify({ text: 'First line.', output: 'ro-batch.wav' })}\n${JSON.stringify({ text: 'Second line.', output: 'ok.wav' })}\n`, 0o644);
    server.requests.length = 0;
    const r = await tts(['batch', '--no-cache', jobs]);
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /line 1: .*ro-batch\.wav.*permission denied/);
    assert.equal(await readFile(path, 'utf8'), 'precious\n');
    assert.equal((await readFile(join(dir, 'ok.wav'))).subarray(0, 4).toString('latin1'), 'RIFF');
    assert.deepEqual(server.requests.map((q) => (JSON.parse(q.body) as { input: string }).input), ['Second line.']);
  });
});

describe('another user\'s file in a sticky folder (/tmp)', { skip: !asRoot && 'making another user\'s file needs root (CI runs as root)' }, () => {
  let dir: string;
  let server: TestServer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-sticky-'));
    await chmod(dir, 0o755);
    server = await startPatternServer(4800);
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A folder with mode 1777 owned by `owner`. */
  async function stickyFolder(name: string, owner: number): Promise<string> {
    const path = join(dir, name);
    await mkdir(path);
    await chown(path, owner, owner);
    await chmod(path, 0o1777);
    return path;
  }

  /** A file with `text`, owned by `owner`, mode 0666 (anyone may write into it). */
  async function file(path: string, owner: number): Promise<string> {
    await writeFile(path, 'theirs\n');
    await chown(path, owner, owner);
    await chmod(path, 0o666);
    return path;
  }

  function tts(args: string[]): Promise<CliResult> {
    return runTts(args, {
      cwd: dir,
      env: { TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-sticky', HOME: dir, XDG_CONFIG_HOME: dir, XDG_CACHE_HOME: dir },
      prefix: ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'],
    });
  }

  it('-o or --subtitles naming root\'s 0666 file in root\'s sticky folder, run as nobody: exit 7 saying why, before any request, the file kept', async () => {
    const shared = await stickyFolder('shared', 0);
    const audio = await file(join(shared, 'theirs.wav'), 0);
    const cues = await file(join(shared, 'theirs.srt'), 0);
    for (const args of [['-o', audio], ['-o', join(shared, 'mine.wav'), '--subtitles', cues]]) {
      server.requests.length = 0;
      const r = await tts(['stream', '--no-cache', ...args, 'Hello there.']);
      assert.equal(r.code, 7, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /theirs\.(wav|srt): permission denied \(user 0's file in the sticky folder .*shared: only its owner, the folder's owner or root may replace it\)/);
      assert.equal(server.requests.length, 0, `${args.join(' ')}: no request`);
    }
    assert.equal(await readFile(audio, 'utf8'), 'theirs\n');
    assert.equal(await readFile(cues, 'utf8'), 'theirs\n');
  });

  it('nobody\'s own file there, or root\'s file in nobody\'s own sticky folder, is replaced as before (the rename may)', async () => {
    const shared = await stickyFolder('shared2', 0);
    const mine = await file(join(shared, 'mine.wav'), NOBODY);
    const own = await stickyFolder('own', NOBODY);
    const rootsFile = await file(join(own, 'roots.wav'), 0);
    for (const path of [mine, rootsFile]) {
      const r = await tts(['stream', '--no-cache', '-o', path, 'Hello there.']);
      assert.equal(r.code, 0, `${path}: ${r.stderr}`);
      assert.equal((await readFile(path)).subarray(0, 4).toString('latin1'), 'RIFF');
    }
  });
});
