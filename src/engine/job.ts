/**
 * Checks on a synthesis job, and the Node options the engine's worker threads run with.
 */
import { AUDIO_FORMATS, LANGUAGES } from '../protocol/types.js';
import { EngineError, type SynthesisJob } from './types.js';
import { VOICE_VARIANTS } from './voices.js';

/**
 * Checks a job's fields (the service validates requests; this guards other callers).
 * @throws EngineError naming every problem.
 */
export function validateJob(job: SynthesisJob): void {
  const problems: string[] = [];
  if (typeof job.text !== 'string' || job.text.trim() === '') problems.push('text must be a non-empty string');
  if (!(job.voice in VOICE_VARIANTS)) problems.push(`unknown voice ${JSON.stringify(job.voice)}`);
  if (!(LANGUAGES as readonly string[]).includes(job.language)) problems.push(`unknown language ${JSON.stringify(job.language)}`);
  if (!(AUDIO_FORMATS as readonly string[]).includes(job.format)) problems.push(`unknown format ${JSON.stringify(job.format)}`);
  if (!Number.isInteger(job.sampleRate) || job.sampleRate < 1000 || job.sampleRate > 384000) {
    problems.push(`sample rate must be an integer of Hz from 1000 to 384000, got ${job.sampleRate}`);
  }
  if (job.channels !== 1 && job.channels !== 2) problems.push(`channels must be 1 or 2, got ${job.channels}`);
  if (problems.length > 0) throw new EngineError(`invalid synthesis job: ${problems.join('; ')}`);
}

/**
 * Node options for the workers: those of the process's own that a worker accepts and that
 * matter to it (source maps, warnings, module hooks). Workers refuse per-process and V8 options
 * such as --expose-gc or --max-old-space-size (ERR_WORKER_INVALID_EXEC_ARGV), and a file-started
 * worker refuses --input-type (ERR_INPUT_TYPE_NOT_ALLOWED), so anything else is left out.
 */
export function workerExecArgv(): string[] {
  const args: string[] = [];
  const withValue = new Set(['--import', '--require', '-r', '--conditions', '-C', '--loader', '--experimental-loader']);
  for (let i = 0; i < process.execArgv.length; i++) {
    const arg = process.execArgv[i]!;
    const name = arg.split('=', 1)[0]!;
    if (withValue.has(name)) {
      args.push(arg);
      if (!arg.includes('=') && i + 1 < process.execArgv.length) args.push(process.execArgv[++i]!);
    } else if (name === '--enable-source-maps' || name === '--no-warnings' || name === '--no-deprecation' || name === '--trace-warnings') {
      args.push(arg);
    }
  }
  return args;
}
