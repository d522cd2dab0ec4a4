/**
 * One-shot runs of the built-in engine as a user pays them (issue 20): `tts stream` of one English
 * sentence (with en-man-1, and again with the default voice) and one Japanese sentence with kanji,
 * no service configured, no piece cache —
 * - spawn → first audio byte on stdout, against `node -e 0` (spawn → exit) in the same run;
 * - the whole process writing a WAV file (`-o FILE.wav`), spawn → exit, against `node -e 0`;
 * - its peak RSS (the kernel's high-water mark, measurePeakRss) in MiB, against `node -e 0`'s;
 * and native CMU Flite (`flite -voice rms -t TEXT -o FILE.wav`, the same voice as en-man-1) and
 * native `espeak-ng` on the same sentences as information rows, when installed; and, as
 * information, the engine's floor (bench/engine-floor-program.ts: Node doing nothing but the
 * synthesizer's own cold run for the sentence, its module loading taken out), spawn → first byte
 * and spawn → exit: a lower bound for running the synthesizers as tts runs them; what `tts` adds
 * is the difference, and a target at or below the floor is out of reach of any change outside the
 * synthesizers.
 * Runs are interleaved (ours, node, native per round) so drift of a shared machine hits all alike.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { speechSegments } from '../src/engine/japanese.js';
import { espeakVoiceName } from '../src/engine/voices.js';
import { cleanEnv } from '../test/helpers/cli.js';
import type { BenchOptions, Figure } from './figures.js';
import { measurePeakRss, REPO_ROOT, timedSpawn, ttsArgs, which } from './process.js';
import { median } from './stats.js';

/** Targets of issue 20, as ratios to `node -e 0` and peak RSS in MiB. */
export const ONESHOT_TARGETS = {
  en: { firstByteRatio: 5, wallRatio: 6, peakMiB: 150 },
  ja: { firstByteRatio: 10, wallRatio: 12, peakMiB: 230 },
} as const;

const MIB = 1024 * 1024;

/**
 * What tts's readings make of a Japanese sentence: the kana eSpeak NG speaks, for the floor program.
 * @throws Error unless the sentence makes exactly one Japanese segment (with an English one, the
 *   floor would speak it with the Japanese voice, which tts does not).
 */
async function japaneseReading(sentence: string): Promise<string> {
  const segments = await speechSegments(sentence, 'ja');
  if (segments.length !== 1 || segments[0]!.language !== 'ja') throw new Error(`the floor needs a sentence tts reads as one Japanese segment: ${JSON.stringify(segments)}`);
  return segments[0]!.text;
}

/** The engine's floor program (bench/engine-floor-program.ts), as compiled. */
const FLOOR_PROGRAM = path.join(REPO_ROOT, 'dist', 'bench', 'engine-floor-program.js');

/**
 * The sentences, each with its voice. The second English row is the same sentence with the
 * default voice, ja-man-1 (what a run with no `--voice` uses, as `tts say "Build finished"` is
 * typed; passed explicitly so a configured default cannot change it), whose English
 * goes to Flite too (issue 20, fifth round: that run had also started eSpeak NG). Its native
 * baseline would be the first row's again, so it has none.
 */
const SENTENCES: { lang: 'en' | 'ja'; voice: string; text: string; label: string; native?: false }[] = [
  { lang: 'en', voice: 'en-man-1', text: 'The build finished without errors, and all tests passed.', label: 'English sentence' },
  { lang: 'en', voice: 'ja-man-1', text: 'The build finished without errors, and all tests passed.', label: 'English sentence, default voice (ja-man-1)', native: false },
  { lang: 'ja', voice: 'ja-man-1', text: '今日は良い天気なので、東京駅から歩いて行きます。', label: 'Japanese sentence (kanji)' },
];

/**
 * Measures medians of 3 rounds with `--quick`, 7 otherwise (after one discarded round that fills
 * the page cache). Each round: ours to stdout (first byte), ours to a WAV (wall and peak RSS),
 * `node -e 0` (wall and peak RSS), native flite / espeak-ng to a WAV, and the engine's floor
 * (first byte and wall; not for the default voice's row, whose engine work is the first row's),
 * with Node's compile cache in a folder of this run (NODE_COMPILE_CACHE: Node 22.8 and later use
 * it, as `tts` uses its own; the discarded round fills it).
 */
export async function benchOneshot(options: BenchOptions): Promise<Figure[]> {
  const rounds = options.quick ? 3 : 7;
  const env = cleanEnv({ TTS_NO_CACHE: '1' });
  const flite = which('flite');
  const espeak = which('espeak-ng');
  const dir = mkdtempSync(path.join(tmpdir(), 'tts-bench-oneshot-'));
  const wav = path.join(dir, 'x.wav');
  const floorEnv = { ...env, NODE_COMPILE_CACHE: path.join(dir, 'compile') };
  const figures: Figure[] = [];
  try {
    for (const s of SENTENCES) {
      const first: number[] = [];
      const wall: number[] = [];
      const peak: number[] = [];
      const nodeWall: number[] = [];
      const nodePeak: number[] = [];
      const native: number[] = [];
      const nativePeak: number[] = [];
      const floorFirst: number[] = [];
      const floorWall: number[] = [];
      const withFloor = s.native !== false;
      // What the floor program speaks: the sentence for Flite, its readings for eSpeak NG.
      const floorText = s.lang === 'en' ? s.text : await japaneseReading(s.text);
      const nativeCommand: [string, string[]] | undefined =
        s.native === false
          ? undefined
          : s.lang === 'en' && flite !== undefined
          ? [flite, ['-voice', 'rms', '-t', s.text, '-o', wav]]
          : espeak !== undefined
            ? [espeak, ['-v', espeakVoiceName(s.voice, s.lang), '-w', wav, s.text]]
            : undefined;
      for (let r = -1; r < rounds; r++) {
        const streamed = await timedSpawn(process.execPath, ttsArgs('stream', '-q', '-v', s.voice, s.text), { env });
        if (streamed.firstByteMs === undefined) throw new Error(`tts stream wrote no audio for the ${s.label}: ${streamed.stderr.trim()}`);
        const file = await measurePeakRss(process.execPath, ttsArgs('stream', '-q', '-v', s.voice, '-o', wav, s.text), { env });
        const node = await measurePeakRss(process.execPath, ['-e', '0'], { env });
        const nat = nativeCommand === undefined ? undefined : await measurePeakRss(nativeCommand[0], nativeCommand[1], { env });
        const floor = withFloor ? await timedSpawn(process.execPath, [FLOOR_PROGRAM, s.lang, floorText], { env: floorEnv }) : undefined;
        const floorFirstByte = floor?.firstByteMs;
        const imports = Number(/^imports ([\d.]+)$/m.exec(floor?.stderr ?? '')?.[1]);
        if (floor !== undefined && (floorFirstByte === undefined || !Number.isFinite(imports))) {
          throw new Error(`the engine's floor program wrote no audio or no import time for the ${s.label}: ${floor.stderr.trim()}`);
        }
        if (r < 0) continue;
        if (floor !== undefined && floorFirstByte !== undefined) {
          floorFirst.push(floorFirstByte - imports);
          floorWall.push(floor.exitMs - imports);
        }
        first.push(streamed.firstByteMs);
        wall.push(file.run.exitMs);
        peak.push(file.bytes / MIB);
        nodeWall.push(node.run.exitMs);
        nodePeak.push(node.bytes / MIB);
        if (nat !== undefined) {
          native.push(nat.run.exitMs);
          nativePeak.push(nat.bytes / MIB);
        }
      }
      const t = ONESHOT_TARGETS[s.lang];
      const nodeBase = { name: 'node -e 0', value: median(nodeWall) };
      const note = `median of ${rounds}`;
      figures.push(
        {
          bench: 'oneshot',
          name: `one-shot: ${s.label}, spawn → first audio byte (stdout)`,
          value: median(first),
          unit: 'ms',
          baseline: nodeBase,
          targets: [{ kind: 'ratio-max', limit: t.firstByteRatio }],
          note,
        },
        {
          bench: 'oneshot',
          name: `one-shot: ${s.label} to a WAV file, whole process`,
          value: median(wall),
          unit: 'ms',
          baseline: nodeBase,
          targets: [{ kind: 'ratio-max', limit: t.wallRatio }],
          note,
        },
        {
          bench: 'oneshot',
          name: `one-shot: ${s.label} to a WAV file, peak RSS`,
          value: median(peak),
          unit: 'MiB',
          baseline: { name: 'node -e 0', value: median(nodePeak) },
          targets: [{ kind: 'max', limit: t.peakMiB }],
          note: `${note}; kernel high-water mark`,
        },
      );
      if (nativeCommand !== undefined) {
        const name = path.basename(nativeCommand[0]);
        figures.push(
          {
            bench: 'oneshot',
            name: `one-shot: native ${name}, ${s.label} to a WAV file, whole process`,
            value: median(native),
            unit: 'ms',
            baseline: nodeBase,
            targets: [],
            note: `${note}; the same sentence${name === 'flite' ? ', voice rms (en-man-1)' : ''}`,
          },
          {
            bench: 'oneshot',
            name: `one-shot: native ${name}, ${s.label}, peak RSS`,
            value: median(nativePeak),
            unit: 'MiB',
            baseline: { name: 'node -e 0', value: median(nodePeak) },
            targets: [],
            note,
          },
        );
      }
      if (withFloor) {
        const floorNote = `${note}; ${path.basename(FLOOR_PROGRAM)}: Node and ${s.lang === 'en' ? 'Flite' : "eSpeak NG on the sentence's readings"} alone, its module loading taken out: a lower bound for the synthesizer as tts runs it`;
        figures.push(
          {
            bench: 'oneshot',
            name: `one-shot floor: ${s.label}, the synthesizer alone, spawn → first audio byte`,
            value: median(floorFirst),
            unit: 'ms',
            baseline: nodeBase,
            targets: [],
            note: floorNote,
          },
          {
            bench: 'oneshot',
            name: `one-shot floor: ${s.label}, the synthesizer alone, whole process`,
            value: median(floorWall),
            unit: 'ms',
            baseline: nodeBase,
            targets: [],
            note: floorNote,
          },
        );
      }
      options.log(`oneshot: ${s.label}, ${rounds} interleaved rounds`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
