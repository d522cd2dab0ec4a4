/**
 * Speech spans: the one shape every marked-up input becomes before it is split and requested
 * (docs/cli.md §11 — SSML, dialogue scripts; plain text and documents are one span per run).
 *
 * A span is a stretch of text spoken with one set of settings. Pieces (text/split.ts) never cross
 * a span: a change of voice, language or prosody starts a new request. What is sent for a piece —
 * and so its cache key (docs/cli.md §8) — is its text, voice and language alone; rate and gain are
 * applied after the cache by the audio stage, and breaks are silence the stage inserts.
 */
import type { RunMappedText } from '../engine/mapped-text.js';
import type { Language } from '../protocol/types.js';

/** One stretch of text with the settings it is spoken with. */
export interface SpeechSpan {
  /** The text to request, as sent (lexicon and say-as already applied); may be empty for a span that only carries a break or marks. */
  text: string;
  /**
   * When the pronunciation lexicon changed the span's text (docs/cli.md §11.3): `text` mapped to
   * the span's text as it would be without the lexicon (`written.source`; `written.text` is
   * `text`), by which its words and subtitle cues are told in the text as written (§12.1).
   * Absent when the lexicon changed nothing.
   */
  written?: RunMappedText | undefined;
  /** Preset voice id (docs/cli.md §4); undefined = the run's `--voice`. */
  voice?: string | undefined;
  /** Language of the request; undefined = the run's. */
  language?: Language | undefined;
  /** Rate factor multiplying `--speed` (W3C SSML 1.1 §3.2.4 `prosody rate`); undefined = 1. */
  rate?: number | undefined;
  /** Gain in dB added to `--volume` (SSML `prosody volume`, `emphasis`); `-Infinity` = silent; undefined = 0. */
  gainDb?: number | undefined;
  /** Silence before the span's audio, in milliseconds of delivered audio (SSML `break`, a turn gap); undefined = 0. */
  breakBeforeMs?: number | undefined;
  /** SSML `mark` names reached at the span's start (W3C SSML 1.1 §3.3.2), in document order. */
  marks?: string[] | undefined;
  /** The speaker of a dialogue script's turn (subtitles `<v Name>`, `--json` turns). */
  speaker?: string | undefined;
  /** Whether the span begins a new sentence (SSML `s`/`p`, a new turn): `--pause` goes only there. Default true. */
  newSentence?: boolean | undefined;
}
