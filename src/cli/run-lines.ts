/**
 * The lines a run prints about itself (docs/cli.md §2 "Progress"): the clock, the progress line
 * and the summary line at the end. Pure formatting: what to show is the caller's.
 */


/** Seconds as `m:ss`, or `h:mm:ss` from an hour on (rounded down to the second). */
export function formatClock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** What a progress line shows (a subset of src/speak/progress.ts ProgressSnapshot). */
export interface ProgressLine {
  doneChars: number;
  fraction: number | undefined;
  audioSeconds: number;
  elapsedSeconds: number;
  leftSeconds: number | undefined;
  /** Pieces whose audio all arrived. */
  pieces: number;
}

/**
 * One progress line: `42% · 1234 chars · 75.3 s audio · 0:12 elapsed · ~0:16 left`; without a
 * known total (stdin) no share and no estimate. Text counts only once a piece's audio all
 * arrived, so while the first piece (up to --max-chars) still streams, the line says so instead
 * of "0% · 0 chars" beside a minute of audio: `first piece · 46.2 s audio · 0:05 elapsed`.
 */
export function formatProgress(p: ProgressLine): string {
  const parts: string[] = [];
  if (p.pieces === 0 && p.fraction !== 1) {
    return ['first piece', `${p.audioSeconds.toFixed(1)} s audio`, `${formatClock(p.elapsedSeconds)} elapsed`].join(' · ');
  }
  if (p.fraction !== undefined) parts.push(`${Math.floor(p.fraction * 100)}%`);
  parts.push(`${p.doneChars} chars`, `${p.audioSeconds.toFixed(1)} s audio`, `${formatClock(p.elapsedSeconds)} elapsed`);
  if (p.leftSeconds !== undefined && p.fraction !== undefined && p.fraction > 0) parts.push(`~${formatClock(p.leftSeconds)} left`);
  return parts.join(' · ');
}

/** What the end-of-run summary line names. */
export interface RunSummaryLine {
  /** `wrote book.wav`, `played`, `wrote book.wav and played`, `wrote stdout`. */
  what: string;
  audioSeconds: number;
  /** Container and encoding, e.g. `WAV pcm16`, `raw mulaw`. */
  encoding: string;
  sampleRate: number;
  channels: number;
  elapsedSeconds: number;
  /** Requests made to the service. */
  requests: number;
  /** Pieces replayed from the cache. */
  cacheHits: number;
}

/**
 * The one summary line at the end of a run on a terminal (docs/cli.md §2): e.g.
 * `wrote book.wav · 4:12 audio · WAV pcm16 · 24000 Hz · 1 ch · 0:38 elapsed · 23 requests, 12 from cache`.
 */
export function formatRunSummary(s: RunSummaryLine): string {
  return [
    s.what,
    `${formatClock(s.audioSeconds)} audio`,
    s.encoding,
    `${s.sampleRate} Hz`,
    `${s.channels} ch`,
    `${formatClock(s.elapsedSeconds)} elapsed`,
    `${s.requests} request${s.requests === 1 ? '' : 's'}, ${s.cacheHits} from cache`,
  ].join(' · ');
}
