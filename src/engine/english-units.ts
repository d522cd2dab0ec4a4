/**
 * Units per second (or per hour) after a number in English text, read as words before Flite reads
 * the text (README "Units per second in English"): `500 MB/s` → `500 megabytes per second`,
 * `100 Mbps` → `100 megabits per second`, `90 km/h` → `90 kilometers per hour`. Flite's own text
 * normalization (its English lexicon and letter-to-sound rules, cmu_us_*: us_expand) spells such a
 * token letter by letter with the slash said: "M B slash S". The Japanese voices read units of
 * their own in japanese-numbers.ts (`COUNTERS`, README "Units of machines"); this is the English
 * voices' counterpart, kept as small: only a unit the table knows, right after a number (with or
 * without a space), followed by `/s` or `/h`, or a bit rate written `…bps`. Every other text reaches
 * Flite as before, the same bytes.
 *
 * The rewrite is a map (mapped-text.ts RunMappedText), so that the words said for a unit ("megabytes
 * per second") are timed as the unit as written (`MB/s`: docs/cli.md §12.1), and those said for a
 * unit glued to its number (`500MB/s`, "500 megabytes per second") as that one written token.
 */
import { RunMappedText, type Rewrite } from './mapped-text.js';
import { nfkcRanges } from './word-timings.js';

/** Units said in words before "per second" / "per hour": symbol → the singular word (an `s` makes the plural). */
const UNITS: Readonly<Record<string, string>> = {
  B: 'byte',
  kB: 'kilobyte',
  KB: 'kilobyte',
  MB: 'megabyte',
  GB: 'gigabyte',
  TB: 'terabyte',
  KiB: 'kibibyte',
  MiB: 'mebibyte',
  GiB: 'gibibyte',
  TiB: 'tebibyte',
  bit: 'bit',
  kbit: 'kilobit',
  Kbit: 'kilobit',
  Mbit: 'megabit',
  Gbit: 'gigabit',
  Tbit: 'terabit',
  kb: 'kilobit',
  Kb: 'kilobit',
  Mb: 'megabit',
  Gb: 'gigabit',
  m: 'meter',
  km: 'kilometer',
};

/** Bit rates written as one symbol: symbol → the singular word said before "per second". */
const BIT_RATES: Readonly<Record<string, string>> = {
  bps: 'bit',
  kbps: 'kilobit',
  Kbps: 'kilobit',
  Mbps: 'megabit',
  Gbps: 'gigabit',
  Tbps: 'terabit',
};

/** What comes after `/`: the word said after "per". */
const PER: Readonly<Record<string, string>> = { s: 'second', h: 'hour' };

/** Longest symbols first, so `kbit` is not taken for `kb` and the rest. */
const alternation = (names: readonly string[]): string => [...names].sort((a, b) => b.length - a.length).join('|');

/**
 * A number (digits, with `,` or `.` groups), an optional space, then a unit per second or hour or
 * a bit rate, as a token of its own: no letter, digit or `_` glued before the number, none (nor
 * another `/`) after the unit.
 */
const RATE = new RegExp(
  String.raw`(?<![\p{L}\p{N}_.,])(\d+(?:[.,]\d+)*)( ?)(?:(${alternation(Object.keys(UNITS))})/([sh])|(${alternation(Object.keys(BIT_RATES))}))(?![\p{L}\p{N}_/])`,
  'gu',
);

/** The word for `count` of `unit`: the plural but after exactly 1. */
function counted(count: string, unit: string): string {
  return count === '1' ? unit : `${unit}s`;
}

/**
 * `text` (the NFKC form the English synthesizers read, japanese.ts speechSegments) with each unit
 * per second or hour after a number said in words: the number stays as written, and the unit
 * becomes `megabytes per second` (a space put in between when there was none). In the map, a
 * spaced unit (`500 MB/s`) alone is replaced, so the number is a word of its own; a glued one
 * (`500MB/s`) is replaced with its number, so that every word said for it comes from the one
 * written token.
 * @returns the rewritten text with its map to `text`; `text` itself, unmapped, when none is found.
 */
export function readEnglishRates(text: string): RunMappedText {
  const edits: Rewrite[] = [];
  for (const m of text.matchAll(RATE)) {
    const [all, count, space, unit, per, rate] = m;
    const said = unit !== undefined ? `${counted(count!, UNITS[unit]!)} per ${PER[per!]!}` : `${counted(count!, BIT_RATES[rate!]!)} per second`;
    if (space === '') {
      // Glued (`90km/h`): one written token, so every word said for it — the number's too — is
      // that token (as Flite's own glued tokens are, `90kg`); the number is read as written, a
      // space put in after it.
      edits.push({ start: m.index, end: m.index + all.length, text: `${count!} ${said}` });
      continue;
    }
    // Spaced (`90 km/h`): the number and the space stay as written, words of their own; the unit is said.
    const at = m.index + count!.length + space!.length;
    edits.push({ start: at, end: m.index + all.length, text: said });
  }
  return RunMappedText.of(text).edit(edits);
}

/**
 * For `text` (an English job's text) and what the English synthesizers read of it — its NFKC form
 * with units said in words ({@link readEnglishRates}; japanese.ts speechSegments): a function from a
 * UTF-16 range of what they read to the range of `text` it came from (word-timings.ts nfkcRanges
 * after the units' map: a word of "megabytes per second" is the `MB/s` written). Undefined when
 * ranges cannot be told (nfkcRanges).
 */
export function englishRanges(text: string): ((start: number, end: number) => [number, number]) | undefined {
  const nfkc = nfkcRanges(text);
  if (nfkc === undefined) return undefined;
  const read = readEnglishRates(text.normalize('NFKC'));
  if (!read.changed) return nfkc;
  return (start, end) => {
    const r = read.sourceRange(start, end);
    return nfkc(r.start, r.end);
  };
}
