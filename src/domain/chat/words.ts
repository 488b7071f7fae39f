/** Lower case without accents, so "Humano" matches "humano" and "atención" matches "atencion". */
function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** A `WordsForManual` / `WordsForAttention` list: words or phrases separated by commas, semicolons or new lines. */
export function wordList(list: string): string[] {
  return list
    .split(/[,;\n]/)
    .map((w) => fold(w.trim()))
    .filter((w) => w !== '');
}

/** The first listed word or phrase `text` contains as whole words (case- and accent-insensitive), or null. */
export function firstListedWord(text: string, list: string): string | null {
  const words = wordList(list);
  if (words.length === 0) return null;
  const folded = fold(text);
  const found = words.find((word) => {
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+');
    return new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, 'u').test(folded);
  });
  return found ?? null;
}

/** Whether `text` contains any of the listed words or phrases as whole words (case- and accent-insensitive). */
export function containsAnyWord(text: string, list: string): boolean {
  return firstListedWord(text, list) !== null;
}
