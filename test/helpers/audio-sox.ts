/**
 * sox as an independent judge of the WAV files we write: what it reads back (rate, channels,
 * encoding, length, the audio bytes) must be what we meant. Tests skip when sox is missing.
 */
import { spawnSync } from 'node:child_process';

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

/** Runs `sox --i` once and reads its fields; throws if sox fails or a field is missing. */
export function soxInfo(file: string): SoxInfo {
  const r = spawnSync('sox', ['--i', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sox --i ${file} failed: ${r.stderr}`);
  const field = (name: string): string => {
    const m = new RegExp(`^${name}\\s*: (.*)$`, 'm').exec(r.stdout);
    if (m === null) throw new Error(`sox --i ${file} printed no ${name}:\n${r.stdout}`);
    return m[1]!.trim();
  };
  // "Duration       : 00:00:01.43 = 68545 samples ~ 107.102 CDDA sectors"; no such line for a
  // file without audio (where `sox --i -s` says 0).
  const duration = /^Duration\s*: .*= (\d+) samples/m.exec(r.stdout);
  if (duration === null && /^Duration/m.test(r.stdout)) throw new Error(`sox --i ${file}: unreadable Duration:\n${r.stdout}`);
  const samples = duration === null ? 0 : Number(duration[1]);
  const rate = Number(field('Sample Rate'));
  return {
    rate,
    channels: Number(field('Channels')),
    // "16-bit Signed Integer PCM": the encoding without the precision, as `sox --i -e` names it.
    encoding: field('Sample Encoding').replace(/^\d+-bit /, ''),
    samples,
    duration: samples / rate,
    warnings: r.stderr.trim(),
  };
}

/** The audio bytes sox reads from a WAV file, in the file's own encoding (`sox file -t raw -`). */
export function soxRawData(file: string): { data: Buffer; warnings: string } {
  const r = spawnSync('sox', [file, '-t', 'raw', '-'], { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`sox ${file} failed: ${r.stderr.toString()}`);
  return { data: r.stdout, warnings: r.stderr.toString().trim() };
}
