/**
 * The rows the training thread keeps while it reads the spool file, in compact columns: a Float64Array per
 * numeric column (a cell that is not exactly `String(number)` kept aside), dictionary codes for the others.
 * A store appends, or writes over its slots as a ring or a reservoir, so the kept rows stay within a cap
 * whatever the upload's size; the training set (training-set.ts) decides which rows go in.
 */
const TAG_NUMBER = 0;
const TAG_NULL = 1;
const TAG_OTHER = 2;

/** A numeric column: the number when the cell is exactly `String(number)`, else the cell kept aside. */
class NumberColumn {
  values: Float64Array;
  tags: Uint8Array;
  readonly other = new Map<number, string>();
  constructor(capacity: number) {
    this.values = new Float64Array(capacity);
    this.tags = new Uint8Array(capacity);
  }
  grow(capacity: number) {
    const values = new Float64Array(capacity);
    values.set(this.values);
    const tags = new Uint8Array(capacity);
    tags.set(this.tags);
    this.values = values;
    this.tags = tags;
  }
  set(slot: number, cell: string | null) {
    if (this.tags[slot] === TAG_OTHER) this.other.delete(slot);
    if (cell === null) {
      this.tags[slot] = TAG_NULL;
      return;
    }
    const n = Number(cell);
    if (cell !== '' && String(n) === cell) {
      this.values[slot] = n;
      this.tags[slot] = TAG_NUMBER;
    } else {
      this.tags[slot] = TAG_OTHER;
      this.other.set(slot, cell);
    }
  }
  get(slot: number): string | null {
    const tag = this.tags[slot];
    if (tag === TAG_NUMBER) return String(this.values[slot]);
    return tag === TAG_NULL ? null : (this.other.get(slot) as string);
  }
  bytes() {
    return this.values.byteLength + this.tags.byteLength + this.other.size * 64;
  }
}

/** Any other column: dictionary codes (-1 = null); the dictionary is rebuilt when most of it is stale. */
class CodeColumn {
  codes: Int32Array;
  dictionary: string[] = [];
  lookup = new Map<string, number>();
  textBytes = 0;
  constructor(capacity: number) {
    this.codes = new Int32Array(capacity);
  }
  grow(capacity: number) {
    const codes = new Int32Array(capacity);
    codes.set(this.codes);
    this.codes = codes;
  }
  set(slot: number, cell: string | null) {
    if (cell === null) {
      this.codes[slot] = -1;
      return;
    }
    let code = this.lookup.get(cell);
    if (code === undefined) {
      code = this.dictionary.length;
      this.dictionary.push(cell);
      this.lookup.set(cell, code);
      this.textBytes += 2 * cell.length + 80;
    }
    this.codes[slot] = code;
  }
  get(slot: number): string | null {
    const code = this.codes[slot] as number;
    return code < 0 ? null : (this.dictionary[code] as string);
  }
  /** Keeps only the values still referenced by the first `size` slots. */
  compact(size: number) {
    const dictionary: string[] = [];
    const lookup = new Map<string, number>();
    let textBytes = 0;
    for (let slot = 0; slot < size; slot++) {
      const value = this.get(slot);
      if (value === null) continue;
      let code = lookup.get(value);
      if (code === undefined) {
        code = dictionary.length;
        dictionary.push(value);
        lookup.set(value, code);
        textBytes += 2 * value.length + 80;
      }
      this.codes[slot] = code;
    }
    this.dictionary = dictionary;
    this.lookup = lookup;
    this.textBytes = textBytes;
  }
  bytes() {
    return this.codes.byteLength + this.textBytes;
  }
}

export type Column = NumberColumn | CodeColumn;

/** Rows in slots: appended (growing up to `capacity`) or written over (ring, reservoir). */
export class RowStore {
  size = 0;
  rowIndex: Int32Array;
  readonly columns: Column[];
  constructor(
    private readonly numeric: boolean[],
    public capacity = Infinity,
  ) {
    const initial = Math.min(1024, capacity);
    this.rowIndex = new Int32Array(initial);
    this.columns = numeric.map((isNumber) => (isNumber ? new NumberColumn(initial) : new CodeColumn(initial)));
  }
  put(slot: number, row: number, cells: (string | null)[]) {
    if (slot >= this.rowIndex.length) {
      const next = Math.min(this.capacity, Math.max(slot + 1, this.rowIndex.length * 2));
      const rowIndex = new Int32Array(next);
      rowIndex.set(this.rowIndex);
      this.rowIndex = rowIndex;
      for (const column of this.columns) column.grow(next);
    }
    this.rowIndex[slot] = row;
    this.columns.forEach((column, c) => column.set(slot, cells[c] ?? null));
    if (slot >= this.size) this.size = slot + 1;
    // Written-over slots leave stale dictionary values behind; drop them once they dominate.
    if (this.size === this.capacity) {
      for (const column of this.columns) {
        if (column instanceof CodeColumn && column.dictionary.length > 2 * this.capacity) column.compact(this.size);
      }
    }
  }
  append(row: number, cells: (string | null)[]) {
    this.put(this.size, row, cells);
  }
  /** Column `c` becomes dictionary-coded (a column to detect turned out not numeric). */
  toCodes(c: number) {
    const from = this.columns[c];
    if (!(from instanceof NumberColumn)) return;
    const to = new CodeColumn(this.rowIndex.length);
    for (let slot = 0; slot < this.size; slot++) to.set(slot, from.get(slot));
    this.columns[c] = to;
  }
  cells(slot: number): (string | null)[] {
    return this.columns.map((column) => column.get(slot));
  }
  bytes() {
    return this.rowIndex.byteLength + this.columns.reduce((n, c) => n + c.bytes(), 0);
  }
  /** Slots ordered by their upload row. */
  order(): number[] {
    const slots = Array.from({ length: this.size }, (_, i) => i);
    return slots.sort((a, b) => (this.rowIndex[a] as number) - (this.rowIndex[b] as number));
  }
  clear() {
    this.size = 0;
    this.rowIndex = new Int32Array(0);
    this.columns.length = 0;
  }
}
