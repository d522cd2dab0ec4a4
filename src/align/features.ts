/**
 * MFCC features for the aligner (issue 23 point 2): both signals — the service's audio and the
 * built-in engine's rendering of the same text — become one 13-coefficient vector per 10 ms,
 * computed the same way at the same rate, so that frames can be compared one to one.
 *
 * The coefficients come from meyda (MIT; Hann window, FFT, 26 triangular mel filters over
 * 0 … Nyquist, log, DCT-II). meyda wants power-of-two frames: 512 samples at 16 kHz (32 ms) rather
 * than the textbook 25 ms; with the 10 ms hop that only widens each frame's view a little.
 * meyda takes log(energy + 1), which flattens everything quiet when samples are in −1 … 1, so
 * frames are scaled to the 16-bit range (×32768) first, where log(e + 1) ≈ log(e) for speech.
 * Cepstral mean normalisation (the mean of each coefficient over the piece is subtracted) takes
 * away what two voices or two channels add to every frame alike (vocal tract length, microphone,
 * codec colouring), which matters more than anything else when a man is aligned with a woman.
 */
import meydaModule from 'meyda';
import { StreamResampler } from '../dsp/resample.js';

/** Sample rate the features are computed at, in Hz: speech fits under its 8 kHz Nyquist. */
export const ALIGN_RATE = 16_000;
/** Samples per analysis frame at {@link ALIGN_RATE} (32 ms; meyda needs a power of two). */
export const FRAME_SAMPLES = 512;
/** Samples between the starts of two frames at {@link ALIGN_RATE} (10 ms). */
export const HOP_SAMPLES = 160;
/** Seconds between two frames. */
export const HOP_SECONDS = HOP_SAMPLES / ALIGN_RATE;
/** Coefficients per frame (c0 … c12). */
export const COEFFICIENTS = 13;

/**
 * meyda's object. Its Node entry is CommonJS (`module.exports = Meyda`) while its types describe
 * the ES module (`export default Meyda`), so TypeScript sees the default import one level too deep.
 */
const Meyda = meydaModule as unknown as (typeof meydaModule)['default'];

/**
 * Weight of c0 (the frame's log energy) against the other coefficients (weight 1) in the
 * frame distance, after mean normalisation. Loudness and its contour differ from voice to voice
 * and from engine to engine far more than the spectral shape of the same phone does, so at full
 * weight c0 pulls boundaries towards loudness changes. Tuned on the bench (ten English sentences,
 * plain symmetric2 steps; with the off-diagonal weight of dtw.ts, 0.3 stays best of 0.15 … 1):
 * en-man-1 against en-woman-1 (Flite and Flite) is about as good at 0.3 as at 1 (mean 19 ms,
 * p95 64 ms against 17 ms / 59 ms), and eSpeak NG against Flite (two synthesizers, as with
 * another service) much better (mean 27 ms, p95 100 ms against 44 ms / 166 ms).
 */
export const C0_WEIGHT = 0.3;

/** Scale from −1 … 1 floats to the 16-bit range, see the file comment. */
const PCM_SCALE = 32768;

/**
 * Feature frames of one signal: `frames` vectors of {@link COEFFICIENTS} numbers, flat
 * (frame f's coefficient c at `data[f * COEFFICIENTS + c]`). Frame f covers samples
 * f × {@link HOP_SAMPLES} … + {@link FRAME_SAMPLES} at {@link ALIGN_RATE}; its centre is at
 * f × {@link HOP_SECONDS} + 16 ms.
 */
export interface FeatureFrames {
  frames: number;
  data: Float32Array;
}

/**
 * Mono float samples at `fromRate` Hz converted to {@link ALIGN_RATE} through the project's one
 * resampler (src/dsp/resample.ts, libsamplerate); returned as they are when already at that rate.
 * @param samples mono, −1 … 1.
 * @throws RangeError for a rate libsamplerate does not take (see StreamResampler.create).
 */
export async function toAlignRate(samples: Float32Array, fromRate: number): Promise<Float32Array> {
  if (fromRate === ALIGN_RATE) return samples;
  const resampler = await StreamResampler.create(1, fromRate, ALIGN_RATE);
  try {
    const head = resampler.push(samples);
    const tail = resampler.end();
    const out = new Float32Array(head.length + tail.length);
    out.set(head, 0);
    out.set(tail, head.length);
    return out;
  } finally {
    resampler.destroy();
  }
}

/**
 * MFCC frames of mono samples at {@link ALIGN_RATE}, cepstral-mean normalised over the whole
 * signal, c0 weighted by {@link C0_WEIGHT}. The last frame may run past the end (zero-padded); a signal shorter than one hop still
 * gives one frame. Deterministic: the same samples give the same features.
 * @param samples mono, −1 … 1, at 16 kHz.
 */
export function mfccFrames(samples: Float32Array): FeatureFrames {
  configureMeyda();
  const frames = Math.max(1, Math.ceil(samples.length / HOP_SAMPLES));
  const data = new Float32Array(frames * COEFFICIENTS);
  const frame = new Float32Array(FRAME_SAMPLES);
  for (let f = 0; f < frames; f++) {
    const start = f * HOP_SAMPLES;
    const end = Math.min(samples.length, start + FRAME_SAMPLES);
    frame.fill(0);
    for (let i = start; i < end; i++) frame[i - start] = samples[i]! * PCM_SCALE;
    const mfcc = Meyda.extract('mfcc', frame) as number[] | null;
    if (mfcc === null) throw new Error('meyda returned no MFCCs');
    for (let c = 0; c < COEFFICIENTS; c++) data[f * COEFFICIENTS + c] = mfcc[c] ?? 0;
  }
  normaliseMeans(data, frames);
  for (let f = 0; f < frames; f++) data[f * COEFFICIENTS]! *= C0_WEIGHT;
  return { frames, data };
}

/** Subtracts each coefficient's mean over all frames (cepstral mean normalisation). */
function normaliseMeans(data: Float32Array, frames: number): void {
  for (let c = 0; c < COEFFICIENTS; c++) {
    let sum = 0;
    for (let f = 0; f < frames; f++) sum += data[f * COEFFICIENTS + c]!;
    const mean = sum / frames;
    for (let f = 0; f < frames; f++) data[f * COEFFICIENTS + c]! -= mean;
  }
}

/**
 * meyda is one shared object; its filter banks are built for the rate and frame size set on it.
 * Set both before every use (cheap), so nothing else that uses meyda can change ours.
 */
function configureMeyda(): void {
  Meyda.sampleRate = ALIGN_RATE;
  Meyda.bufferSize = FRAME_SAMPLES;
  Meyda.numberOfMFCCCoefficients = COEFFICIENTS;
  Meyda.melBands = 26;
  Meyda.windowingFunction = 'hanning';
}
