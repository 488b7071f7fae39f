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

/** Whether `text` contains any of the listed words or phrases as whole words (case- and accent-insensitive). */
export function containsAnyWord(text: string, list: string): boolean {
  const words = wordList(list);
  if (words.length === 0) return false;
  const folded = fold(text);
  return words.some((word) => {
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+');
    return new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, 'u').test(folded);
  });
}
