/**
 * Command-line arguments that were not UTF-8 (docs/cli.md §1 "Text input"): Node turns their bad
 * bytes into U+FFFD, so a word would be spoken and a file name would name another file; tts reads
 * the bytes back from /proc/self/cmdline and refuses the argument (exit 2), before anything runs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { invalidUtf8Argument } from '../../src/cli/argv-utf8.js';
import { runTts } from '../helpers/cli.js';

/** NUL-terminated arguments as /proc/self/cmdline holds them. */
const cmdline = (...args: (string | Buffer)[]) => (): Buffer => Buffer.concat(args.flatMap((a) => [Buffer.isBuffer(a) ? a : Buffer.from(a), Buffer.from([0])]));
const BAD = Buffer.from([0x61, 0x62, 0x63, 0xff, 0x64, 0x2e]); // abc\xffdef.
const FFFD = Buffer.from('\uFFFD');

describe('invalidUtf8Argument', () => {
  it('names the argument by its position, the byte offset of its first bad byte', () => {
    const argv = ['stream', 'Hello', BAD.toString('utf8')];
    assert.deepEqual(invalidUtf8Argument(argv, ['node', 'tts.js', ...argv], cmdline('node', '--flag', 'tts.js', 'stream', 'Hello', BAD)), { position: 3, offset: 3 });
    // A lead byte cut off at the end is bad from that byte.
    const cut = Buffer.from([0x61, 0xe3, 0x81]);
    assert.deepEqual(invalidUtf8Argument([cut.toString('utf8')], ['n', 's', cut.toString('utf8')], cmdline('n', 's', cut)), { position: 1, offset: 1 });
  });

  it('tells a U+FFFD given as such from bad bytes, and an option value from a word: by position, not by content', () => {
    // `hi\uFFFD hi\xff`: the second is the bad one, though both decode alike.
    const both = ['hi\uFFFD', Buffer.from([0x68, 0x69, 0xff]).toString('utf8')];
    assert.deepEqual(invalidUtf8Argument(both, ['n', 's', ...both], cmdline('n', 's', Buffer.concat([Buffer.from('hi'), FFFD]), Buffer.from([0x68, 0x69, 0xff]))), { position: 2, offset: 2 });
    // `-v \xff \uFFFD`: the option's value is argument 2, the word (given as U+FFFD) is fine.
    const opt = ['-v', '\uFFFD', '\uFFFD'];
    assert.deepEqual(invalidUtf8Argument(opt, ['n', 's', ...opt], cmdline('n', 's', '-v', Buffer.from([0xff]), FFFD)), { position: 2, offset: 0 });
    assert.equal(invalidUtf8Argument(['a\uFFFDb'], ['n', 's', 'a\uFFFDb'], cmdline('n', 's', 'a\uFFFDb')), undefined);
  });

  it('judges only this process\'s own command line, and nothing without /proc', () => {
    const argv = [BAD.toString('utf8')];
    assert.equal(invalidUtf8Argument(argv, ['n', 's', 'other'], cmdline('n', 's', BAD)), undefined);
    assert.equal(invalidUtf8Argument(argv, ['n', 's', ...argv], () => undefined), undefined);
    assert.equal(invalidUtf8Argument(['fine'], ['n', 's', 'fine'], () => assert.fail('read')), undefined);
  });
});

describe('bin/tts.js with an argument that is not UTF-8 (Linux: /proc/self/cmdline)', { skip: process.platform !== 'linux' && 'no /proc/self/cmdline' }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-argv-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  // bash appends the bytes: Node's spawn takes only strings.
  const withBytes = (printf: string): string[] => ['bash', '-c', `exec "$0" "$@" "$(printf '${printf}')"`];

  it('a word: exit 2 before anything is written', async () => {
    const out = join(dir, 'never.wav');
    const r = await runTts(['stream', '--no-cache', '-o', out, 'Hello'], { prefix: withBytes('abc\\377def.') });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /argument 6 \(abc\uFFFDdef\.\) is not valid UTF-8 \(first bad byte at offset 3\)/u);
    assert.deepEqual(await readdir(dir), []);
  });

  it('a file name (-o): exit 2, no file made under the name with U+FFFD in place of the bytes', async () => {
    const r = await runTts(['stream', '--no-cache', 'Hello.', '-o'], { prefix: withBytes(`${dir}/a\\377.wav`) });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /argument 5 .* is not valid UTF-8 \(first bad byte at offset \d+\)/u);
    assert.deepEqual(await readdir(dir), []);
  });
});
