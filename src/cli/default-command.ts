/**
 * `say` is the default command (docs/cli.md §1): `tts "hello"` speaks. A first word that is
 * almost a command's name (`serv`, `voice`, `stram`) is more likely a typo than text to speak,
 * so it is refused with "did you mean" instead of being read aloud.
 */
import leven from 'leven';

/**
 * The command `word` is a near miss of, if any: one edit away (two for words of six letters or
 * more), or the first three or more letters of a name. Only a lowercase word can be one; the
 * names themselves are not near misses.
 * @param names the program's command names.
 */
export function nearMissCommand(word: string | undefined, names: readonly string[]): string | undefined {
  if (word === undefined || !/^[a-z][a-z-]*$/.test(word) || names.includes(word)) return undefined;
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = name.startsWith(word) && word.length >= 3 ? 1 : swaps(word, name);
    const limit = word.length >= 6 ? 2 : 1;
    if (d <= limit && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** Edit distance where swapping two neighbouring letters (`sya` → `say`) counts as one edit. */
function swaps(a: string, b: string): number {
  let d = leven(a, b);
  for (let i = 0; i + 1 < a.length; i++) {
    const swapped = a.slice(0, i) + a[i + 1] + a[i] + a.slice(i + 2);
    if (swapped !== a) d = Math.min(d, 1 + leven(swapped, b));
  }
  return d;
}
