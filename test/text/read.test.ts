/**
 * Text input (src/text/read.ts; docs/cli.md §1 "Text input", §3 exit 2) in-process, from
 * PassThrough streams and temp files: strict UTF-8 whatever the block boundaries, a BOM dropped,
 * the first bad byte or NUL named by its offset, --max-input checked as bytes arrive (a regular
 * file before reading), `--lines` yielding each line as its break arrives, and Ctrl-C ending a
 * read of a pipe nobody writes to, or of a FIFO whose path went away meanwhile. Only `mkfifo` and
 * writers of FIFOs are spawned.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { TtsError } from '../../src/errors.js';
import { formatByteSize } from '../../src/byte-size.js';
import { opensLeftBlocked } from '../../src/blocked-opens.js';
import { decodeText, openText, readLines, type TextInput } from '../../src/text/read.js';

const MiB = 2 ** 20;

async function* blocks(bytes: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let start = 0;
  for (const p of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    if (p > start) yield bytes.subarray(start, p);
    start = Math.max(start, p);
  }
  if (start < bytes.length) yield bytes.subarray(start);
}

async function all(text: AsyncIterable<string>): Promise<string> {
  let s = '';
  for await (const t of text) s += t;
  return s;
}

/** The usage error (exit 2) a read ends with. */
async function usageError(text: AsyncIterable<string> | Promise<AsyncIterable<string>>): Promise<TtsError> {
  try {
    await all(await text);
  } catch (error) {
    assert.ok(error instanceof TtsError, String(error));
    assert.equal(error.code, 'usage');
    assert.equal(error.exitCode, 2);
    return error;
  }
  assert.fail('the read did not fail');
}

const never = new AbortController().signal;

describe('decodeText', () => {
  it('gives back the text whatever the block boundaries (characters of 1–4 bytes cut anywhere)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.array(fc.nat(400), { maxLength: 12 }), async (text, cuts) => {
        const bytes = Buffer.from(text, 'utf8');
        const parts: string[] = [];
        for await (const t of decodeText(blocks(bytes, cuts), 'x', MiB, never)) parts.push(t);
        assert.equal(parts.join(''), text);
        assert.ok(parts.every((p) => p !== ''));
      }),
    );
  });

  it('drops a byte order mark at the start only', async () => {
    const bytes = Buffer.from('\ufeffa\ufeffb', 'utf8');
    assert.equal(await all(decodeText(blocks(bytes, [1, 2]), 'x', MiB, never)), 'a\ufeffb');
  });

  it('refuses invalid UTF-8 and NUL, naming the first bad byte offset across blocks', async () => {
    const bad = Buffer.concat([Buffer.from('héllo ', 'utf8'), Buffer.from([0xff]), Buffer.from(' more')]);
    const e = await usageError(decodeText(blocks(bad, [3, 5]), 'notes.txt', MiB, never));
    assert.match(e.message, /^notes\.txt is not valid UTF-8 text \(first bad byte at offset 7\)/);
    const nul = Buffer.concat([Buffer.from('abc'), Buffer.from([0]), Buffer.from('def')]);
    assert.match((await usageError(decodeText(blocks(nul, [2]), 'standard input', MiB, never))).message, /has a NUL byte at offset 3/);
    // A character cut off by the end of the input.
    const cut = Buffer.from('日本', 'utf8').subarray(0, 4);
    assert.match((await usageError(decodeText(blocks(cut, [1]), 'x', MiB, never))).message, /first bad byte at offset 3/);
    // A sequence broken off inside the text (Latin-1 é before a letter, 日 without its last byte):
    // the bad byte is its lead byte, not the byte after it where a decoder notices.
    const latin1 = Buffer.concat([Buffer.from('Hello w'), Buffer.from([0xe9]), Buffer.from('rld.')]);
    assert.match((await usageError(decodeText(blocks(latin1, [3]), 'x', MiB, never))).message, /first bad byte at offset 7\)/);
    const broken = Buffer.concat([Buffer.from('ab'), Buffer.from('日', 'utf8').subarray(0, 2), Buffer.from('c')]);
    assert.match((await usageError(decodeText(blocks(broken, [3]), 'x', MiB, never))).message, /first bad byte at offset 2\)/);
  });

  it('stops at --max-input as the bytes arrive, without reading the rest', async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<Buffer> {
      for (;;) {
        pulled++;
        yield Buffer.alloc(1000, 0x61);
      }
    }
    const e = await usageError(decodeText(endless(), 'standard input', 4096, never));
    assert.match(e.message, /larger than --max-input \(4 KiB\)/);
    assert.equal(pulled, 5, 'read one block past the limit, no more');
  });
});

describe('readLines (--lines)', () => {
  it('yields each line when its break arrives, drops CR before LF and blank lines, and keeps a last line without a break', async () => {
    const stdin = new PassThrough();
    const lines = readLines(stdin, MiB, never);
    stdin.write('first li');
    stdin.write('ne\r\n\n   \nsecond\n');
    assert.deepEqual(await lines.next(), { value: 'first line', done: false });
    assert.deepEqual(await lines.next(), { value: 'second', done: false });
    // Nothing more until more arrives: the next line waits for its break or the end.
    const third = lines.next();
    stdin.end('third, unterminated');
    assert.deepEqual(await third, { value: 'third, unterminated', done: false });
    assert.equal((await lines.next()).done, true);
  });

  it('drops a byte order mark at the start of the input only, as a file read whole drops it', async () => {
    const stdin = new PassThrough();
    stdin.end('\ufeffHello\n\ufeffagain\n');
    const got: string[] = [];
    for await (const line of readLines(stdin, MiB, never)) got.push(line);
    assert.deepEqual(got, ['Hello', '\ufeffagain']);
  });

  it('names the line of a bad byte, and refuses a line longer than --max-input', async () => {
    const bad = new PassThrough();
    bad.end(Buffer.concat([Buffer.from('ok\nalso ok\nbad '), Buffer.from([0xc3, 0x28]), Buffer.from('\n')]));
    const out: string[] = [];
    const e = await usageError(
      (async function* () {
        for await (const l of readLines(bad, MiB, never)) {
          out.push(l);
          yield l;
        }
      })(),
    );
    assert.deepEqual(out, ['ok', 'also ok']);
    assert.match(e.message, /^line 3 of standard input is not valid UTF-8/);
    const long = new PassThrough();
    long.end(`short\n${'x'.repeat(2000)}`);
    assert.match((await usageError(readLines(long, 1024, never))).message, /^line 2 of standard input is larger than --max-input \(1 KiB\)/);
  });

  it('refuses a line longer than --max-input that arrives whole in one block', async () => {
    const stdin = new PassThrough();
    stdin.end(`short\n${'x'.repeat(100)}\nafter\n`);
    const out: string[] = [];
    const e = await usageError(
      (async function* () {
        for await (const l of readLines(stdin, 10, never)) {
          out.push(l);
          yield l;
        }
      })(),
    );
    assert.deepEqual(out, ['short']);
    assert.match(e.message, /^line 2 of standard input is larger than --max-input \(10 bytes\)/);
  });

  it('refuses a NUL or a bad byte of a line whose break has not come, without waiting for it (cat /dev/zero)', async () => {
    for (const [bytes, message] of [
      [Buffer.concat([Buffer.from('one\ntw'), Buffer.alloc(4)]), /^line 2 of standard input is not text: it has a NUL byte at offset 2/],
      [Buffer.from([0x6f, 0x6b, 0x0a, 0x61, 0xff, 0x62]), /^line 2 of standard input is not valid UTF-8 text \(first bad byte at offset 1\)/],
    ] as const) {
      const stdin = new PassThrough();
      const lines = readLines(stdin, MiB, never);
      stdin.write(bytes); // and nothing more: the stream stays open
      const first = await lines.next();
      assert.equal(first.value, bytes.includes(0) ? 'one' : 'ok');
      const e = await lines.next().then(
        () => assert.fail('no error before the line ended'),
        (error: unknown) => error,
      );
      assert.ok(e instanceof TtsError && e.exitCode === 2, String(e));
      assert.match(e.message, message);
    }
    // A character cut at the end of a block is not a bad byte.
    const stdin = new PassThrough();
    const lines = readLines(stdin, MiB, never);
    stdin.write(Buffer.from([0x61, 0xc3]));
    const next = lines.next();
    stdin.end(Buffer.from([0xa9, 0x0a]));
    assert.deepEqual(await next, { value: 'aé', done: false });
  });

  it('Ctrl-C while waiting on a pipe nobody writes to: throws the reason and destroys the stream', async () => {
    const stdin = new PassThrough();
    const controller = new AbortController();
    const reason = new TtsError('interrupted', 'interrupted');
    const next = readLines(stdin, MiB, controller.signal).next();
    controller.abort(reason);
    await assert.rejects(next, (e) => e === reason);
    assert.equal(stdin.destroyed, true);
  });
});

describe('openText', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-read-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const input = (extra: Partial<TextInput>): TextInput => ({ words: [], file: undefined, stdin: new PassThrough(), maxInputBytes: MiB, signal: never, ...extra });

  it('words are joined with single spaces; words and -f together are refused', async () => {
    assert.equal(await all(await openText(input({ words: ['Hello', 'there.'] }))), 'Hello there.');
    await usageError(openText(input({ words: ['a'], file: 'x.txt' })));
  });

  it('-f FILE is read in blocks; a regular file over --max-input is refused before reading; missing files and folders are named', async () => {
    const path = join(dir, 'book.txt');
    const text = '本の一行目です。\n'.repeat(10_000);
    await writeFile(path, text);
    assert.equal(await all(await openText(input({ file: path }))), text);
    const e = await usageError(openText(input({ file: path, maxInputBytes: 1024 })));
    assert.match(e.message, /book\.txt is larger than --max-input \(1 KiB\)/);
    assert.match((await usageError(openText(input({ file: join(dir, 'missing.txt') })))).message, /cannot read .*missing\.txt: no such file/);
    assert.match((await usageError(openText(input({ file: dir })))).message, /it is a directory/);
  });

  it('-f - and no words read stdin', async () => {
    for (const file of ['-', undefined]) {
      const stdin = new PassThrough();
      stdin.end('from stdin');
      assert.equal(await all(await openText(input({ file, stdin }))), 'from stdin');
    }
  });
});

describe('formatByteSize (exact, as the --max-input message says it)', () => {
  it('whole units the way --max-input takes them', () => {
    assert.equal(formatByteSize(64 * MiB, { exact: true }), '64 MiB');
    assert.equal(formatByteSize(512 * 1024, { exact: true }), '512 KiB');
    assert.equal(formatByteSize(2 ** 30, { exact: true }), '1 GiB');
    assert.equal(formatByteSize(1500, { exact: true }), '1500 bytes');
  });
});

describe('a FIFO whose writer was there first (mkfifo f; producer > f & tts -f f)', () => {
  it('reads what the writer wrote, however soon it closes: no open waits for a second writer', { timeout: 30_000 }, async () => {
    const { execFileSync, spawn } = await import('node:child_process');
    const dir = await mkdtemp(join(tmpdir(), 'tts-read-fifo-'));
    try {
      for (let round = 0; round < 8; round++) {
        const fifo = join(dir, `in-${round}.fifo`);
        execFileSync('mkfifo', [fifo]);
        // The writer's open waits for a reader; it then writes and closes at once.
        const writer = spawn('sh', ['-c', 'printf "Hello there." > "$1"', 'sh', fifo], { stdio: 'ignore' });
        const exited = new Promise((resolve) => writer.on('exit', resolve));
        const source = await openText({ words: [], file: fifo, stdin: new PassThrough(), maxInputBytes: MiB, signal: new AbortController().signal });
        assert.equal(await all(source), 'Hello there.', `round ${round}`);
        await exited;
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a FIFO nobody writes to (-f FIFO, a batch "file")', () => {
  const cases = [
    { when: 'at once (its open may not have reached the FIFO yet)', fate: undefined },
    { when: "once its open waits, the FIFO's path removed meanwhile", fate: 'removed' },
    { when: "once its open waits, the FIFO's path replaced by a regular file meanwhile", fate: 'replaced' },
  ] as const;
  for (const { when, fate } of cases) {
    it(`Ctrl-C ${when} ends the read with the interruption, and frees the open`, { timeout: 20_000 }, async () => {
      const { execFileSync } = await import('node:child_process');
      const { unlink } = await import('node:fs/promises');
      const { untilFifoOpenWaits } = await import('../helpers/fifo.js');
      const dir = await mkdtemp(join(tmpdir(), 'tts-read-fifo-'));
      try {
        const fifo = join(dir, 'in.fifo');
        execFileSync('mkfifo', [fifo]);
        const controller = new AbortController();
        const reason = new TtsError('interrupted', 'interrupted');
        const reading = openText({ words: [], file: fifo, stdin: new PassThrough(), maxInputBytes: MiB, signal: controller.signal });
        if (fate !== undefined) {
          await untilFifoOpenWaits(process.pid);
          await unlink(fifo);
          if (fate === 'replaced') await writeFile(fifo, 'another text');
        }
        controller.abort(reason);
        await assert.rejects(reading, (e: unknown) => e === reason);
        // The open returned (woken through the FIFO, held since before it): none was given up still blocked.
        assert.equal(opensLeftBlocked(), 0);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
