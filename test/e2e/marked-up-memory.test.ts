/**
 * Peak memory of inputs read whole before anything is requested — SSML documents (docs/cli.md
 * §11.1) and dialogue scripts (§11.2) — in hostile shapes: each at most 4 times its size above a
 * small run of the same command (VmHWM of the spawned `bin/tts.js`, test/helpers/cli.ts
 * `runTtsMeasured`); 10 times with a lexicon. A 48 MB document of tiny elements peaked at 587 MB,
 * a script with one 60 MB turn at 615 MB: one object per span, the text copied several times
 * over, saxes's text grown a line at a time, ICU memory left to a garbage collector that did not
 * see it, say-as text 18 times its content, a lexicon's rewriting in millions of parts.
 *
 * A run is measured to its first request, which fails (exit 6, a closed port, no retry): the
 * document is read whole before it. `--dry-run` is measured where what it prints is the point.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, runTtsMeasured, TTS_BIN } from '../helpers/cli.js';
import { stalledFifo } from '../helpers/fifo.js';

/** Size of each hostile input, in MiB: large enough that its multiple, not V8's own slack, decides. */
const SIZE_MIB = 40;
/** Most peak memory an input may cost above a small run of the same command, per byte of input. */
const PER_BYTE = 4;
/**
 * The same with a lexicon (docs/cli.md §11.3), which rewrites a text node or a turn whole: the
 * text, its rewriting (which may be 4 times as long) and the spans.
 */
const PER_BYTE_LEXICON = 10;

const MIB = 1024 * 1024;
const env = { TTS_BASE_URL: 'http://127.0.0.1:9', TTS_API_KEY: 'sk-memory-0123456789' };

/** `unit(0)`, `unit(1)`… inside `<speak>` until the document is {@link SIZE_MIB} MiB (the units are ASCII). */
function ssml(unit: (i: number) => string): string {
  const parts = ['<speak>'];
  for (let i = 0, n = 15; n < SIZE_MIB * MIB; i++) {
    const u = unit(i);
    parts.push(u);
    n += u.length;
  }
  parts.push('</speak>');
  return parts.join('');
}

/** `first` then `unit(0)`, `unit(1)`… until the text is {@link SIZE_MIB} MiB (ASCII). */
function repeated(first: string, unit: (i: number) => string): string {
  const parts = [first];
  for (let i = 0, n = first.length; n < SIZE_MIB * MIB; i++) {
    const u = unit(i);
    parts.push(u);
    n += u.length;
  }
  return parts.join('');
}

/** A real run, `--dry-run`, or `--dry-run` of a document refused (exit 2) as soon as it is over a limit. */
type Mode = 'run' | 'print' | 'refused';

describe(`peak memory of SSML and dialogue scripts read whole: at most ${PER_BYTE} times a ${SIZE_MIB} MiB input above a small run`, () => {
  let dir: string;
  /** Peak RSS of a small run of each mode and kind, in MiB. */
  const baseline = new Map<string, number>();

  /** Runs `tts stream` on `file` (a real run to its first request, or --dry-run) and returns its peak RSS in MiB. */
  async function peakOf(mode: Mode, file: string, extra: string[], refusal?: RegExp): Promise<number> {
    const out = join(dir, 'out.wav');
    const args = mode === 'run' ? ['stream', '-f', file, '-o', out, '--retries', '0', ...extra] : ['stream', '-f', file, '--dry-run', ...extra];
    const r = await runTtsMeasured(args, { env, timeoutMs: 180_000 });
    // Read whole and accepted: a run goes on to its first request (exit 6), a dry run prints it (exit 0).
    assert.equal(r.code, mode === 'run' ? 6 : mode === 'refused' ? 2 : 0, r.stderr);
    if (refusal !== undefined) assert.match(r.stderr, refusal);
    if (mode === 'run') {
      assert.match(r.stderr, /cannot connect/);
      assert.equal(existsSync(out), false);
    }
    return r.peakRssMb;
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-marked-up-memory-'));
    // A replacement every few words, in both directions of length.
    await writeFile(join(dir, 'lexicon.toml'), '[en]\n"friend" = "pal"\n"Hello" = "Hi there"\n');
    const small = { ssml: ['small.ssml', '<speak><s>Hello there.</s><break time="10ms"/>Fine.</speak>', []], script: ['small.script.txt', 'Alice: Hello there.\nBob: Fine.\n', ['--cast', 'Alice=en-woman-1,Bob=en-man-1']] } as const;
    for (const [kind, [name, text, extra]] of Object.entries(small)) {
      await writeFile(join(dir, name), text);
      for (const mode of ['run', 'print'] as const) baseline.set(`${mode} ${kind}`, await peakOf(mode, join(dir, name), [...extra]));
    }
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const shapes: { what: string; mode: Mode; kind: 'ssml' | 'script'; text: () => string; extra?: string[]; lexicon?: boolean; refusal?: RegExp }[] = [
    { what: 'an SSML document of tiny elements (<s>w1</s>…)', mode: 'run', kind: 'ssml', text: () => ssml((i) => `<s>w${i}</s>`) },
    { what: 'sentences between breaks (Go on.<break time="10ms"/>…)', mode: 'run', kind: 'ssml', text: () => ssml(() => 'Go on.<break time="10ms"/>') },
    { what: 'many say-as nodes', mode: 'run', kind: 'ssml', text: () => ssml((i) => `<say-as interpret-as="digits">${i % 10000}</say-as> `) },
    { what: 'many sub nodes', mode: 'run', kind: 'ssml', text: () => ssml(() => '<sub alias="ex">x</sub>') },
    { what: 'many phoneme nodes (--ssml-lenient speaks their text), printed', mode: 'print', kind: 'ssml', text: () => ssml(() => '<phoneme alphabet="ipa" ph="t">t</phoneme>'), extra: ['--ssml-lenient'] },
    { what: 'many marks', mode: 'run', kind: 'ssml', text: () => ssml((i) => `<mark name="m${i}"/>w `) },
    { what: 'say-as elements of 10,000 digits, read in Japanese (キュー: 9 bytes of text for 1)', mode: 'run', kind: 'ssml', text: () => ssml(() => `<say-as interpret-as="digits">${'9'.repeat(10_000)}</say-as>`), extra: ['-v', 'ja-woman-1'] },
    { what: 'elements nested 61 deep, over and over, printed', mode: 'print', kind: 'ssml', text: () => ssml(() => `<p>${'<prosody volume="+0dB">'.repeat(60)}w${'</prosody>'.repeat(60)}</p>`) },
    { what: 'attribute values of 1 MiB (sub alias, mark name), printed', mode: 'print', kind: 'ssml', text: () => ssml((i) => (i % 2 === 0 ? `<sub alias="${'a'.repeat(MIB)}">y</sub>` : `<mark name="${'m'.repeat(MIB)}"/>w `)) },
    { what: 'one say-as of digits on short lines, refused past 10,000 characters', mode: 'refused', kind: 'ssml', text: () => `<speak><say-as interpret-as="digits">${repeated('', () => '7\n')}</say-as></speak>`, refusal: /1:8: say-as digits: "7 7 7 .*" is longer than 10,000 characters/ },
    { what: 'one attribute value of short lines, refused past 1 MiB', mode: 'refused', kind: 'ssml', text: () => `<speak><sub alias="${repeated('', () => 'a\n')}">x</sub></speak>`, refusal: /1:8: <sub> has attribute values longer than 1,048,576 characters/ },
    { what: 'attribute values of entities, refused past 1 MiB in all', mode: 'refused', kind: 'ssml', text: () => `<speak><mark ${repeated('', (i) => `a${i}="${'&amp;'.repeat(1000)}" `)}/></speak>`, extra: ['--ssml-lenient'], refusal: /1:8: <mark> has attribute values longer than 1,048,576 characters/ },
    { what: 'one text node of short lines and entities', mode: 'run', kind: 'ssml', text: () => ssml(() => 'Hi &amp; bye.\n') },
    { what: 'prose in one span, printed', mode: 'print', kind: 'ssml', text: () => ssml(() => 'Hello there my friend. ') },
    { what: 'short sentences, each a span, printed', mode: 'print', kind: 'ssml', text: () => ssml(() => '<s>Go on, go on, go on.</s>') },
    { what: 'a script of one turn on one line', mode: 'run', kind: 'script', text: () => repeated('Alice: ', () => 'Hello there my friend. ') },
    { what: 'a script of one turn of many lines', mode: 'run', kind: 'script', text: () => repeated('Alice: Hello.\n', () => 'And then.\n') },
    { what: 'a script of 10,000 turns and many lines', mode: 'run', kind: 'script', text: () => repeated('', (i) => (i < 10_000 ? `${i % 2 === 0 ? 'Alice' : 'Bob'}: Hello there.\n` : 'And then some.\n')) },
    { what: 'prose in one text node, with a lexicon', mode: 'run', kind: 'ssml', text: () => ssml(() => 'Hello there my friend. '), lexicon: true },
    { what: 'a script of one turn of many lines, with a lexicon', mode: 'run', kind: 'script', text: () => repeated('Alice: Hello.\n', () => 'Hello there my friend.\n'), lexicon: true },
  ];
  for (const shape of shapes) {
    it(`${shape.what} (${shape.mode === 'run' ? 'a run' : '--dry-run'})`, async (t) => {
      const file = join(dir, shape.kind === 'ssml' ? 'hostile.ssml' : 'hostile.script.txt');
      await writeFile(file, shape.text());
      const extra = [...(shape.extra ?? []), ...(shape.kind === 'script' ? ['--cast', 'Alice=en-woman-1,Bob=en-man-1'] : []), ...(shape.lexicon === true ? ['--lexicon', join(dir, 'lexicon.toml')] : [])];
      const peak = await peakOf(shape.mode, file, extra, shape.refusal);
      const base = baseline.get(`${shape.mode === 'refused' ? 'print' : shape.mode} ${shape.kind}`)!;
      const most = base + (shape.lexicon === true ? PER_BYTE_LEXICON : PER_BYTE) * SIZE_MIB;
      t.diagnostic(`peak RSS ${peak.toFixed(0)} MiB, a small run's ${base.toFixed(0)} MiB`);
      assert.ok(peak <= most, `peak RSS ${peak.toFixed(0)} MiB for ${SIZE_MIB} MiB of input; a small run's is ${base.toFixed(0)} MiB, so at most ${most.toFixed(0)}`);
    });
  }
  it('printed into a pipe nobody reads: the printing waits for it (no line made ahead), and SIGTERM ends the run, exit 143', { timeout: 180_000 }, async (t) => {
    const file = join(dir, 'hostile.ssml');
    await writeFile(file, ssml(() => '<s>Go on, go on.</s>'));
    // A FIFO whose read end the test holds and never reads.
    const fifo = join(dir, 'stalled.fifo');
    const stalled = stalledFifo(fifo);
    const out = openSync(fifo, constants.O_WRONLY);
    const child = spawn(process.execPath, [TTS_BIN, 'stream', '-f', file, '--print-text'], { env: cleanEnv(env), stdio: ['ignore', out, 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    let ended = false;
    void closed.then(() => (ended = true));
    let peakKb = 0;
    const measure = (): void => {
      try {
        peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0));
      } catch {
        // The process has exited.
      }
    };
    const poll = setInterval(measure, 20);
    try {
      while (!stalled.full()) {
        assert.equal(ended, false, `the run ended before its output filled the pipe: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      measure();
      child.kill('SIGTERM');
      // A run that does not end is killed, and the test fails on its exit code, not on its timeout.
      const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const code = await closed;
      clearTimeout(guard);
      assert.equal(code, 143, `the run did not end on SIGTERM: ${stderr}`);
      assert.match(stderr, /stopped by SIGTERM/);
    } finally {
      clearInterval(poll);
      child.kill('SIGKILL');
      closeSync(out);
      stalled.close();
    }
    // The lines not taken were never made: a million lines written at once were all held (1.2 GB).
    const peak = peakKb / 1024;
    const base = baseline.get('print ssml')!;
    t.diagnostic(`peak RSS ${peak.toFixed(0)} MiB, a small run's ${base.toFixed(0)} MiB`);
    assert.ok(peak <= base + PER_BYTE * SIZE_MIB, `peak RSS ${peak.toFixed(0)} MiB; a small run's is ${base.toFixed(0)} MiB`);
  });
  it('printed into a pipe whose reader goes away after the first lines (| head -1): the printing stops, exit 0', async (t) => {
    const file = join(dir, 'hostile.ssml');
    await writeFile(file, ssml(() => '<s>Go on, go on.</s>'));
    let first = '';
    const r = await runTtsMeasured(['stream', '-f', file, '--print-text'], {
      env,
      timeoutMs: 180_000,
      onSpawn: (child) =>
        child.stdout!.once('data', (d: Buffer) => {
          first = d.toString('utf8');
          child.stdout!.destroy();
        }),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(first, /^Go on, go on\.\n/);
    // The lines nobody will read are not made: printed to the end into a closed pipe, 332 MiB.
    const base = baseline.get('print ssml')!;
    t.diagnostic(`peak RSS ${r.peakRssMb.toFixed(0)} MiB, a small run's ${base.toFixed(0)} MiB`);
    assert.ok(r.peakRssMb <= base + PER_BYTE * SIZE_MIB, `peak RSS ${r.peakRssMb.toFixed(0)} MiB; a small run's is ${base.toFixed(0)} MiB`);
  });
});
