/**
 * Runs `main` (src/cli/main.ts) in this process with injected streams and environment: for the
 * CLI tests where a child process adds nothing. stdin is empty and not a terminal, stdout is
 * collected as bytes (nothing but audio goes there), stderr as text.
 */
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { CommandIo } from '../../src/cli/report.js';

/** What one in-process run produced. */
export interface MainResult {
  /** The exit code main returned (docs/cli.md §3). */
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Runs `tts ARGV…` in-process with exactly `env` as its environment. */
export async function runMain(argv: string[], env: NodeJS.ProcessEnv): Promise<MainResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  let err = '';
  stdout.on('data', (d: Buffer) => out.push(d));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const io: CommandIo = { stdin: new PassThrough(), stdout, stderr, env };
  const code = await main(argv, io);
  return { code, stdout: Buffer.concat(out), stderr: err };
}
