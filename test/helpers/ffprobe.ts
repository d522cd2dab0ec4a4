/**
 * ffprobe and ffmpeg (Debian's) as independent judges of the compressed files tts writes: the
 * codec, rate and channels the container declares, and how many seconds of audio a decoder
 * really gets out of it. CI installs them (.ci/run); there a missing ffmpeg fails instead of skipping.
 */
import { spawnSync } from 'node:child_process';

/** True when both `ffprobe` and `ffmpeg` run here. */
export const haveFfmpeg: boolean =
  spawnSync('ffprobe', ['-version'], { stdio: 'ignore' }).status === 0 && spawnSync('ffmpeg', ['-version'], { stdio: 'ignore' }).status === 0;
if (!haveFfmpeg && process.env['CI'] !== undefined) throw new Error('ffmpeg is not installed, and CI must run the container checks: apt-get install -y ffmpeg');

/** What ffprobe says of the first audio stream and the container. */
export interface Probe {
  /** e.g. `mp3`, `flac`, `opus`, `pcm_s16le`. */
  codec: string;
  /** e.g. `mp3`, `flac`, `ogg`, `wav`. */
  format: string;
  /** Hz, as the decoder will output it (Opus: always 48000). */
  sampleRate: number;
  channels: number;
  /** ffprobe's estimate of the duration in seconds (NaN when it has none, e.g. on a pipe). */
  duration: number;
}

/**
 * Probes a file, or bytes given on stdin (`-`).
 * @throws Error with ffprobe's message when it cannot read them.
 */
export function probe(input: string | Buffer): Probe {
  const args = ['-v', 'error', '-show_entries', 'stream=codec_name,sample_rate,channels:format=format_name,duration', '-of', 'json'];
  const r = typeof input === 'string' ? spawnSync('ffprobe', [...args, input], { encoding: 'utf8' }) : spawnSync('ffprobe', [...args, '-'], { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ffprobe failed (${r.status}): ${r.stderr}`);
  const j = JSON.parse(r.stdout) as { streams: { codec_name: string; sample_rate: string; channels: number }[]; format: { format_name: string; duration?: string } };
  const s = j.streams[0];
  if (s === undefined) throw new Error(`ffprobe found no stream: ${r.stdout}`);
  return { codec: s.codec_name, format: j.format.format_name, sampleRate: Number(s.sample_rate), channels: s.channels, duration: Number(j.format.duration ?? NaN) };
}

/**
 * Decodes a file (or bytes on stdin) completely with ffmpeg and returns the seconds of audio
 * it yields, with ffmpeg's warnings; fails on a decoding error.
 */
export function decodedSeconds(input: string | Buffer): { seconds: number; errors: string } {
  const args = ['-v', 'error', '-i', typeof input === 'string' ? input : '-', '-ac', '1', '-ar', '48000', '-f', 's16le', '-'];
  const r = spawnSync('ffmpeg', args, typeof input === 'string' ? { maxBuffer: 1 << 28 } : { input, maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`ffmpeg failed (${r.status}): ${r.stderr.toString()}`);
  return { seconds: r.stdout.length / 2 / 48000, errors: r.stderr.toString().trim() };
}
