/**
 * English number words for SSML `say-as` (docs/cli.md §11.1): cardinals, ordinals and years in
 * words, so any service reads them the same (a service left with digits may read "2024" as
 * "two zero two four" or "two thousand twenty-four" as it likes).
 */

const ONES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES = ['', 'thousand', 'million', 'billion', 'trillion'];

/** Largest whole number {@link cardinalWords} says in words: 10¹⁵ − 1. */
export const MAX_CARDINAL = 999_999_999_999_999;

/** English digit names, 0–9. */
export const DIGIT_WORDS: readonly string[] = ONES.slice(0, 10);

/** 0–999 in words ('' for 0 unless alone). */
function belowThousand(n: number): string {
  const parts: string[] = [];
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  if (hundreds > 0) parts.push(`${ONES[hundreds]} hundred`);
  if (rest >= 20) parts.push(rest % 10 === 0 ? TENS[rest / 10]! : `${TENS[Math.floor(rest / 10)]}-${ONES[rest % 10]}`);
  else if (rest > 0) parts.push(ONES[rest]!);
  return parts.join(' ');
}

/**
 * A whole number 0 … {@link MAX_CARDINAL} in English words ("one thousand two hundred thirty-four").
 * @throws RangeError outside that range or for a non-integer.
 */
export function cardinalWords(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n > MAX_CARDINAL) throw new RangeError(`${n} is not a whole number from 0 to ${MAX_CARDINAL}`);
  if (n === 0) return 'zero';
  const groups: string[] = [];
  let rest = n;
  for (let scale = 0; rest > 0; scale++) {
    const group = rest % 1000;
    rest = Math.floor(rest / 1000);
    if (group > 0) groups.unshift(SCALES[scale] === '' ? belowThousand(group) : `${belowThousand(group)} ${SCALES[scale]}`);
  }
  return groups.join(' ');
}

const ORDINAL_IRREGULAR: Record<string, string> = { one: 'first', two: 'second', three: 'third', five: 'fifth', eight: 'eighth', nine: 'ninth', twelve: 'twelfth' };

/**
 * A whole number ≥ 1 as an English ordinal in words ("twenty-first").
 * @throws RangeError as {@link cardinalWords}.
 */
export function ordinalWords(n: number): string {
  const words = cardinalWords(n);
  const last = /([a-z]+)$/u.exec(words)![1]!;
  const ordinal = ORDINAL_IRREGULAR[last] ?? (last.endsWith('y') ? `${last.slice(0, -1)}ieth` : `${last}th`);
  return words.slice(0, words.length - last.length) + ordinal;
}

/**
 * A year as it is said: 1999 "nineteen ninety-nine", 2024 "twenty twenty-four", 2000 "two
 * thousand", 2005 "two thousand five", 1900 "nineteen hundred"; other years as cardinals.
 * @throws RangeError for a negative or non-integer year.
 */
export function yearWords(year: number): string {
  if (year >= 1100 && year <= 9999 && !(year >= 2000 && year <= 2009)) {
    const high = Math.floor(year / 100);
    const low = year % 100;
    if (low === 0) return `${cardinalWords(high)} hundred`;
    return `${cardinalWords(high)} ${low < 10 ? `oh ${ONES[low]}` : cardinalWords(low)}`;
  }
  return cardinalWords(year);
}
