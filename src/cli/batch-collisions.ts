/**
 * Before the first job of `tts batch` (docs/cli.md §9): no job may write over what the batch
 * reads (a line's `"file"`, the batch file itself, the config file, a lexicon, the API key file)
 * or over what another job writes (its audio or
 * its subtitles — a batch-wide `--subtitles` is every job's). A single run refuses `-o` over its
 * input; a batch checks every pair at once, so nothing is lost halfway through.
 */
import { fstatSync } from 'node:fs';
import { TtsError } from '../errors.js';
import type { BatchJob } from './batch-jobs.js';
import { assertSideOutputCanBeWritten, fileIdentity } from '../speak/output-checks.js';
import { assertGivenDescriptor, assertNotStandardInput } from '../audio/special-files.js';

/** One path a batch reads or writes, and who names it. */
interface Use {
  /** The 1-based line of the job; 0 for the batch file itself. */
  line: number;
  /** How the message names it: `output`, `"subtitles"`, `"file"`, `the batch file`. */
  role: string;
  path: string;
  /** How messages name a file read that is no line's own: `the lexicon`, `the config file`. */
  what?: string;
}

/** The identity of the batch input: its path, or stdin's file when stdin is a redirected file. */
async function inputIdentity(batchFile: string): Promise<string | undefined> {
  if (batchFile !== '-') return fileIdentity(batchFile);
  try {
    const info = fstatSync(0);
    return info.isFile() ? `inode ${info.dev}:${info.ino}` : undefined;
  } catch {
    return undefined;
  }
}

function describe(use: Use): string {
  if (use.what !== undefined) return `${use.what} ${use.path}`;
  return use.line === 0 ? `the batch file ${use.path}` : `the ${use.role} of line ${use.line}`;
}

/**
 * Checks every output of `jobs` (each valid job's `output`, `subtitles` and `word-timings`)
 * against every input (each job's `"file"`, the batch file, and `settings`: the config file, the
 * lexicons, the API key file) and every other output. A pipe or
 * socket (`/dev/stdout` in `tts batch … | player`, by any name) may take the audio of several
 * jobs, one after another, but no subtitles or word timings besides: those would go into the
 * audio stream, nor another line's (jobs run side by side: their lines would interleave). A
 * line's own FIFO, pipe, socket or device takes its subtitles or word timings, written in place
 * (speak/text-file.ts); devices (`/dev/null`) are not compared, they take any number. A disk, or
 * a socket no descriptor of the batch leads to, is refused as a single run refuses it
 * (speak/output-checks.ts `assertSideOutputCanBeWritten`).
 * @param jobs the batch's jobs; lines that are not valid jobs are skipped (they write nothing).
 * @param batchFile the batch input's path, `-` for stdin.
 * @param settings the other files the batch reads (cli/config-defaults.ts `settingsFiles`: the
 *   config file, the lexicons, the API key file), each with what messages call it.
 * @throws TtsError `usage` (exit 2) naming both lines (or the batch file) and the path; for a
 *   side output that cannot be written, its line, the key and the path.
 */
export async function assertNoCollisions(jobs: readonly BatchJob[], batchFile: string, settings: readonly { what: string; path: string | undefined }[] = []): Promise<void> {
  const folders = new Map<string, Promise<string>>();
  const inputs = new Map<string, Use>();
  const outputs = new Map<string, Use>();
  const batchId = await inputIdentity(batchFile);
  if (batchId !== undefined) inputs.set(batchId, { line: 0, role: 'batch file', path: batchFile });
  for (const { what, path } of settings) {
    if (path === undefined) continue;
    const id = await fileIdentity(path, folders);
    if (id !== undefined && !inputs.has(id)) inputs.set(id, { line: 0, role: what, path, what });
  }
  const valid = jobs.filter((j) => j.invalid === undefined);
  for (const job of valid) {
    if (job.file === undefined) continue;
    assertGivenDescriptor(job.file, `line ${job.line}: the "file"`, 'read');
    const id = await fileIdentity(job.file, folders);
    if (id !== undefined && !inputs.has(id)) inputs.set(id, { line: job.line, role: '"file"', path: job.file });
  }
  for (const job of valid) {
    const written: Use[] = [{ line: job.line, role: 'output', path: job.output }];
    if (job.flags.subtitles !== undefined) written.push({ line: job.line, role: '"subtitles"', path: job.flags.subtitles });
    if (job.flags.wordTimings !== undefined) written.push({ line: job.line, role: '"word-timings"', path: job.flags.wordTimings });
    for (const use of written) {
      const id = await fileIdentity(use.path, folders, true);
      if (id === undefined) continue;
      const read = inputs.get(id);
      if (read !== undefined) {
        throw new TtsError('usage', `line ${use.line}: the ${use.role} ${use.path} is ${describe(read)}: it would be replaced`, {
          hint: 'write the audio to another file',
        });
      }
      const other = outputs.get(id);
      // Audio after audio into one pipe is a stream of the jobs' audio, as `-o /dev/stdout` on each.
      if (other !== undefined && !(id.startsWith('stream ') && other.role === 'output' && use.role === 'output')) {
        // Both are the subtitles (or word timings), and this line did not name them itself: a batch-wide flag.
        const flag = use.role === '"subtitles"' ? 'subtitles' : use.role === '"word-timings"' ? 'word-timings' : undefined;
        const shared = flag !== undefined && other.role === use.role && !job.own.has(flag === 'subtitles' ? 'subtitles' : 'wordTimings');
        const clash = id.startsWith('stream ') ? 'both would go into one stream' : 'one would replace the other';
        throw new TtsError('usage', `line ${use.line}: the ${use.role} ${use.path} is also ${describe(other)}: ${clash}`, {
          hint: shared ? `a batch-wide --${flag} would be rewritten by every job; give each line its own "${flag}"` : 'give every job a file of its own',
        });
      }
      if (other === undefined) outputs.set(id, use);
    }
    assertGivenDescriptor(job.output, `line ${job.line}: the "output"`, 'write');
    await assertNotStandardInput(job.output, `line ${job.line}: the "output"`);
    for (const use of written.slice(1)) await assertSideOutputCanBeWritten(use.path, `line ${use.line}: the ${use.role === '"subtitles"' ? '"subtitles"' : '"word-timings"'}`);
  }
}
