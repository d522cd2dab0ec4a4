/** What `sox --i` says of an audio file (sox is installed by .ci/run). */
import { execFileSync } from 'node:child_process';

/** sox's reading of a WAV file's header. */
export interface SoxInfo {
  channels: number;
  sampleRate: number;
  encoding: string;
  /** Duration in samples per channel. */
  samples: number;
  precisionBits: number;
}

/** Runs `sox --i` on a file. @throws when sox cannot read it. */
export function soxInfo(path: string): SoxInfo {
  const q = (flag: string): string => execFileSync('sox', ['--i', flag, path], { encoding: 'utf8' }).trim();
  const text = execFileSync('sox', ['--i', path], { encoding: 'utf8' });
  const samples = Number(/=\s*(\d+)\s+samples/.exec(text)?.[1] ?? NaN);
  return {
    channels: Number(q('-c')),
    sampleRate: Number(q('-r')),
    encoding: q('-e'),
    samples,
    precisionBits: Number(q('-p')),
  };
}
