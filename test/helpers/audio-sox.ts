/**
 * sox as an independent judge of the WAV files we write: what it reads back (rate, channels,
 * encoding, length, the audio bytes) must be what we meant. Tests skip when sox is missing.
 */
import { execFileSync, spawnSync } from 'node:child_process';

/** True when `sox` runs here. */
export const haveSox: boolean = spawnSync('sox', ['--version'], { stdio: 'ignore' }).status === 0;
// CI installs sox (.ci/run): there a missing sox is a broken set-up, never a reason to skip.
if (!haveSox && process.env['CI'] !== undefined) throw new Error('sox is not installed, and CI must run the sox checks: apt-get install -y sox');

/** What `sox --i` reports for a file. */
export interface SoxInfo {
  rate: number;
  channels: number;
  /** e.g. "Signed Integer PCM", "Floating Point PCM", "u-law". */
  encoding: string;
  /** Sample frames (per channel). */
  samples: number;
  /** Seconds. */
  duration: number;
  /** Everything sox printed on stderr (warnings), trimmed. */
  warnings: string;
}

/** Runs `sox --i` for each field; throws if sox fails. */
export function soxInfo(file: string): SoxInfo {
  let warnings = '';
  const field = (flag: string): string => {
    const r = spawnSync('sox', ['--i', flag, file], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`sox --i ${flag} ${file} failed: ${r.stderr}`);
    warnings += r.stderr;
    return r.stdout.trim();
  };
  return {
    rate: Number(field('-r')),
    channels: Number(field('-c')),
    encoding: field('-e'),
    samples: Number(field('-s')),
    duration: Number(field('-D')),
    warnings: warnings.trim(),
  };
}

/** The audio bytes sox reads from a WAV file, in the file's own encoding (`sox file -t raw -`). */
export function soxRawData(file: string): { data: Buffer; warnings: string } {
  const r = spawnSync('sox', [file, '-t', 'raw', '-'], { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`sox ${file} failed: ${r.stderr.toString()}`);
  return { data: r.stdout, warnings: r.stderr.toString().trim() };
}

/** The audio bytes sox reads from a WAV stream given on its stdin (`sox -t wav - -t raw -`). */
export function soxRawFromStdin(wav: Buffer): Buffer {
  return execFileSync('sox', ['-V1', '-t', 'wav', '-', '-t', 'raw', '-'], { input: wav, maxBuffer: 1 << 28 });
}
