/**
 * The harness of the metamorphic matrix (issue 18, docs/cli.md §8; issue 24 adds the OpenAI
 * dialect): combinations of flags, each run in-process through the CLI's `main()` with and
 * without the piece cache, returning the bytes they wrote. The relations live in matrix.test.ts.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { main } from '../../src/cli/main.js';

/** English text of three sentences. */
export const EN = 'The morning was cold and bright. She walked to the station with a book. Trains came and went.';
/** Sentences in {@link EN}. */
export const EN_SENTENCES = 3;
/** Japanese text of two sentences (needs the kuromoji dictionary). */
export const JA = '今日は良い天気です。東京タワーに行きました。';

/** What one combination wrote: output files by name (`audio`, `subtitles`, `stdout`; a batch's `JOB/audio`, `JOB/subtitles`), and the `--json` summary when asked for. */
export interface Written {
  files: Map<string, Buffer>;
  /** The `--json` summary of a `stream` run (docs/cli.md §1): `requests`, `cache_hits`… */
  summary?: Record<string, unknown>;
}

/** Where a combination runs: a scratch folder and the environment (cache folder, service). */
export interface RunContext {
  dir: string;
  env: NodeJS.ProcessEnv;
}

/** One flag combination of the matrix. */
export interface Combo {
  name: string;
  /** Runs it; `cache` false adds `--no-cache`. Returns what it wrote; throws (assertion) on a non-zero exit. */
  run(ctx: RunContext, cache: boolean): Promise<Written>;
}

/** Runs `tts …args` in-process; `input` goes to stdin. Returns the exit code, stdout and stderr (UTF-8). */
export async function tts(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  let err = '';
  stdout.on('data', (d: Buffer) => out.push(d));
  stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const stdin = Readable.from(input === '' ? [] : [Buffer.from(input)]);
  const code = await main(args, { stdin, stdout, stderr, env });
  return { code, stdout: Buffer.concat(out), stderr: err };
}

/** The JSON objects among `stderr`'s lines (the `--json` summaries), in order. */
export function jsonLines(stderr: string): Record<string, unknown>[] {
  return stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Options of {@link fileCombo}. */
export interface FileComboOptions {
  /** The text (default {@link EN}). */
  text?: string;
  /** `stream` (default) or `realtime`. */
  command?: string;
  /** Write `NAME.srt` too. */
  subtitles?: boolean;
  /** Give the text on stdin one sentence a line, with `--lines`. */
  lines?: boolean;
  /** Add `--json` and return its summary. */
  json?: boolean;
}

/** A combination writing `-o NAME.EXT` (and, with `subtitles`, NAME.srt) of the text, with `flags`. */
export function fileCombo(name: string, ext: string, flags: string[], options: FileComboOptions = {}): Combo {
  return {
    name,
    async run(ctx, cache) {
      const tag = cache ? 'cached' : 'fresh';
      const out = join(ctx.dir, `${name}.${tag}.${ext}`);
      const subs = join(ctx.dir, `${name}.${tag}.srt`);
      const text = options.text ?? EN;
      const args = [options.command ?? 'stream', '-q', ...flags, ...(options.subtitles === true ? ['--subtitles', subs] : []), ...(options.json === true ? ['--json'] : []), ...(cache ? [] : ['--no-cache']), '-o', out];
      const r = options.lines === true ? await tts([...args, '--lines'], ctx.env, text.replace(/(?<=[.。]) ?/g, '\n')) : await tts([...args, text], ctx.env);
      assert.equal(r.code, 0, `${name} (${tag}): ${r.stderr}`);
      const files = new Map<string, Buffer>([['audio', await readFile(out)]]);
      if (options.subtitles === true) files.set('subtitles', await readFile(subs));
      const summary = jsonLines(r.stderr).at(-1);
      return summary === undefined ? { files } : { files, summary };
    },
  };
}

/** A combination writing raw audio to stdout. */
export function stdoutCombo(name: string, flags: string[]): Combo {
  return {
    name,
    async run(ctx, cache) {
      const r = await tts(['stream', '-q', ...flags, ...(cache ? [] : ['--no-cache']), '-o', '-', EN], ctx.env);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      return { files: new Map([['stdout', r.stdout]]) };
    },
  };
}

/** One job of a {@link batchCombo}: the line's keys (docs/cli.md §9) standing for the flags of the `stream` combination `combo`. */
export interface BatchJobSpec {
  /** The name of the single-run combination with the same flags. */
  combo: string;
  /** The output's extension. */
  ext: string;
  /** The line's synthesis keys, by long flag name. */
  keys: Record<string, string | number | boolean>;
  /** The text (default {@link EN}). */
  text?: string;
  /** Give the line a `"subtitles"` file too. */
  subtitles?: boolean;
}

/**
 * A combination running `tts batch` over one JSON line per job (`flags` on the command line are
 * every line's defaults, e.g. `--api openai`). It writes `JOB/audio` (and `JOB/subtitles`) per
 * job, JOB being the job's `combo`, so each can be compared with that combination's own run.
 */
export function batchCombo(name: string, jobs: BatchJobSpec[], flags: string[] = []): Combo {
  return {
    name,
    async run(ctx, cache) {
      const tag = cache ? 'cached' : 'fresh';
      const out = (job: BatchJobSpec, ext: string): string => join(ctx.dir, `${name}.${job.combo}.${tag}.${ext}`);
      const lines = jobs.map((job) => JSON.stringify({ text: job.text ?? EN, output: out(job, job.ext), ...job.keys, ...(job.subtitles === true ? { subtitles: out(job, 'srt') } : {}) }));
      const file = join(ctx.dir, `${name}.${tag}.jsonl`);
      await writeFile(file, lines.join('\n') + '\n');
      const r = await tts(['batch', '-q', '--jobs', '3', ...flags, ...(cache ? [] : ['--no-cache']), file], ctx.env);
      assert.equal(r.code, 0, `${name} (${tag}): ${r.stderr}`);
      const files = new Map<string, Buffer>();
      for (const job of jobs) {
        files.set(`${job.combo}/audio`, await readFile(out(job, job.ext)));
        if (job.subtitles === true) files.set(`${job.combo}/subtitles`, await readFile(out(job, 'srt')));
      }
      return { files };
    },
  };
}
