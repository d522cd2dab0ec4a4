/**
 * Where a synthesis run's audio goes, as far as the embedded engine's start cares (issue 20,
 * fourteenth round): a small module of its own, loaded by both the command's early start
 * (synthesis-command.ts) and the run (synthesis.ts).
 */
import { fstatSync } from 'node:fs';
import type { SynthesisFlags } from './flags.js';
import type { CommandIo } from './report.js';

/**
 * Whether a run of synthesis command `name` (`say`, `stream`, `realtime`) sends its audio only to
 * files, where no one hears it as it comes: `-o FILE` without `--play`, or standard output that is
 * a regular file (`tts stream > out.wav`; with `-o -` too). Playback, a pipe or a terminal: false.
 * Then the whole run's time is what counts, not its first audio's, and the embedded engine may
 * spend its wait for the first job on a warm-up that makes the job shorter but can make its first
 * audio later (engine/flite.ts warmFlite; issue 20, fourteenth round). Never throws.
 * @param io the run's streams: standard output counts only when it is this process's fd 1.
 */
export function audioOnlyToFiles(name: string, flags: Pick<SynthesisFlags, 'output' | 'play'>, io: Pick<CommandIo, 'stdout'>): boolean {
  if (flags.play === true) return false;
  if (flags.output !== undefined && flags.output !== '-') return true;
  if (flags.output === undefined && name !== 'stream') return false;
  if (io.stdout !== process.stdout) return false;
  try {
    return fstatSync(1).isFile();
  } catch {
    return false;
  }
}
