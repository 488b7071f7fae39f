import { isAscii, isUtf8 } from 'node:buffer';
import { Readable } from 'node:stream';
import { parse, type InfoRecord, type Options } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { AppError, Errors } from '../errors.js';

/**
 * Streaming CSV reader that turns an uploaded file into Postgres COPY text-format bytes (UTF-8, the
 * file's own delimiter, one line per row) while it arrives, so memory stays bounded whatever the size.
 *
 * Measured on this machine (docs/interface-notes.md) csv-parse alone reaches about 35% of raw COPY's rows/s,
 * below the 40% target, so stretches of the file without quotes or backslashes take a byte-level fast
 * path: fields are only counted (ragged rows rejected), CRLF and blank lines dropped, and the bytes are
 * handed to COPY as they are. The first block with a quote or backslash switches to csv-parse for the
 * rest of the file; test/unit/csv-ingest.test.ts checks both paths read alike.
 */

export type CsvDelimiter = ',' | ';' | '\t';
export type CsvEncoding = 'ascii' | 'utf-8' | 'latin1';

/** The bytes every file of one upload may still use; shared so several files count together. */
export interface UploadBudget {
  remaining: number;
  readonly limitBytes: number;
}
export const uploadBudget = (limitBytes: number): UploadBudget => ({ remaining: limitBytes, limitBytes });

export interface CsvStream {
  header: string[];
  delimiter: CsvDelimiter;
  /** COPY text-format lines, produced as the file is read. Throws AppError on the first bad row. */
  lines: AsyncGenerator<Buffer>;
  /** Filled in while `lines` is consumed. */
  stats: { rows: number; encoding: CsvEncoding };
}

/**
 * Bounds of one record, so that memory per upload stays bounded whatever the file holds (one quoted
 * cell spanning 20,000 lines is still one record). Configured by CSV_MAX_CELL_KB, CSV_MAX_RECORD_KB and
 * CSV_MAX_COLUMNS; a physical line is bounded by the record size too.
 */
export interface CsvLimits {
  maxCellBytes: number;
  maxRecordBytes: number;
  maxColumns: number;
}
export const DEFAULT_CSV_LIMITS: CsvLimits = { maxCellBytes: 64 * 1024, maxRecordBytes: 1024 * 1024, maxColumns: 1000 };
export const MAX_COLUMNS = DEFAULT_CSV_LIMITS.maxColumns;

/** "64 KB", "1 MB", "1.5 MB": limits as people read them. */
export const sizeText = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${Number((bytes / 1024 / 1024).toFixed(1))} MB` : bytes >= 1024 ? `${Number((bytes / 1024).toFixed(1))} KB` : `${bytes} bytes`;

/** Thrown by lineBlocks, which does not count lines; openCsv names the line. */
class LineTooLong extends Error {}
const NEWLINE = Buffer.from('\n');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

const tooLarge = (budget: UploadBudget) =>
  Errors.uploadTooLarge(`the files exceed the maximum upload size of ${Math.round(budget.limitBytes / 1024 / 1024)} MB`);

/** Complete lines in blocks as they arrive (every block ends with a line break), within the budget. */
async function* lineBlocks(source: AsyncIterable<Buffer | string>, maxLineBytes: number, budget: UploadBudget): AsyncGenerator<Buffer> {
  let carry: Buffer | null = null;
  for await (const raw of source) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    budget.remaining -= chunk.length;
    if (budget.remaining < 0) throw tooLarge(budget);
    const cut = chunk.lastIndexOf(10);
    if (cut === -1) {
      carry = carry ? Buffer.concat([carry, chunk]) : chunk;
      if (carry.length > maxLineBytes) throw new LineTooLong();
      continue;
    }
    // Only the line split across chunks is copied; the rest is handed on as a view (less garbage, less RSS).
    let from = 0;
    if (carry) {
      from = chunk.indexOf(10) + 1;
      yield Buffer.concat([carry, chunk.subarray(0, from)]);
    }
    if (from < cut + 1) yield chunk.subarray(from, cut + 1);
    carry = cut + 1 < chunk.length ? chunk.subarray(cut + 1) : null;
  }
  if (carry && carry.length > 0) yield Buffer.concat([carry, NEWLINE]);
}

/** The delimiter used most often outside quotes in the header line; a comma when none is. */
export function sniffDelimiter(line: string): CsvDelimiter {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === ',' || ch === ';' || ch === '\t')) counts[ch]++;
  }
  let best: CsvDelimiter = ',';
  for (const d of [';', '\t'] as const) if (counts[d] > counts[best]) best = d;
  return best;
}

/** Header names, checked: present, not empty, unique (ignoring case), not all numbers. */
export function readHeader(line: string, delimiter: CsvDelimiter, label: string, maxColumns = MAX_COLUMNS): string[] {
  let records: string[][];
  try {
    const parsed: unknown = parseSync(line, { delimiter, relax_column_count: true });
    records = parsed as string[][];
  } catch (error) {
    throw Errors.invalidUpload(`the header row of '${label}' is not valid CSV (${(error as Error).message})`);
  }
  // Data lines are checked for NUL as they stream; the header is read apart, and Postgres cannot store NUL.
  if (line.includes('\u0000')) throw Errors.invalidUpload(`the header row of '${label}' contains a NUL byte (is it a CSV file?)`);
  const names = (records[0] ?? []).map((name) => name.trim());
  if (names.length > maxColumns) throw Errors.invalidUpload(`'${label}' line 1: the header has ${names.length} columns; at most ${maxColumns} are allowed`);
  const seen = new Map<string, number>();
  names.forEach((name, i) => {
    if (name === '') throw Errors.invalidUpload(`column ${i + 1} of the header row of '${label}' has no name`);
    const key = name.toLowerCase();
    const before = seen.get(key);
    if (before !== undefined) {
      throw Errors.invalidUpload(`the header row of '${label}' names column '${name}' twice (columns ${before + 1} and ${i + 1})`);
    }
    seen.set(key, i);
  });
  if (names.every((name) => NUMBER.test(name))) {
    throw Errors.invalidUpload(`'${label}' has no header row: the first row must hold the column names, not numbers`);
  }
  return names;
}

/** Escapes one cell for COPY text format with the given delimiter. */
function cellEscaper(delimiter: CsvDelimiter): (cell: string) => string {
  const needs = delimiter === '\t' ? /[\\\n\r\t]/ : new RegExp(`[\\\\\\n\\r${delimiter}]`);
  const all = new RegExp(needs.source, 'g');
  const replace = (ch: string) => (ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : ch === '\t' ? '\\t' : `\\${ch}`);
  return (cell) => (needs.test(cell) ? cell.replace(all, replace) : cell);
}

/**
 * Opens a CSV upload: reads up to the header row, then answers the header, the sniffed delimiter and
 * the rows as COPY lines. Encoding: a UTF-8 BOM or valid UTF-8 means UTF-8, otherwise Latin-1 (decided
 * at the first non-ASCII block; ASCII reads alike in both), always handed on as UTF-8.
 */
export async function openCsv(
  source: AsyncIterable<Buffer | string>,
  options: { label: string; budget: UploadBudget; limits?: CsvLimits },
): Promise<CsvStream> {
  const { label } = options;
  const { maxCellBytes, maxRecordBytes, maxColumns } = options.limits ?? DEFAULT_CSV_LIMITS;
  const blocks = lineBlocks(source, maxRecordBytes, options.budget)[Symbol.asyncIterator]();
  const atLine = (n: number, why: string) => Errors.invalidUpload(`'${label}' line ${n}: ${why}`);
  const cellTooLong = (n: number) => atLine(n, `a cell is longer than ${sizeText(maxCellBytes)}`);
  const recordTooLong = (n: number) => atLine(n, `a record is longer than ${sizeText(maxRecordBytes)}`);
  const lineTooLong = (n: number) => atLine(n, `a line is longer than ${sizeText(maxRecordBytes)} (is it a CSV file?)`);
  const stats: CsvStream['stats'] = { rows: 0, encoding: 'ascii' };
  let decided: 'utf-8' | 'latin1' | undefined;
  let offset = 0;

  const normalize = (block: Buffer): Buffer => {
    const at = offset;
    offset += block.length;
    if (isAscii(block)) return block;
    if (decided === undefined) decided = stats.encoding = isUtf8(block) ? 'utf-8' : 'latin1';
    if (decided === 'latin1') return Buffer.from(block.toString('latin1'), 'utf8');
    if (!isUtf8(block)) {
      throw Errors.invalidUpload(`'${label}' is not valid UTF-8 after byte ${at}; save the whole file as UTF-8 or as Latin-1`);
    }
    return block;
  };

  // Header: the first non-blank line.
  let line = 0;
  let headerText: string | undefined;
  let rest: Buffer | undefined;
  const nextBlock = async (linesRead: number) => {
    try {
      return await blocks.next();
    } catch (error) {
      throw error instanceof LineTooLong ? lineTooLong(linesRead + 1) : error;
    }
  };
  for (let first = true; headerText === undefined; first = false) {
    const next = await nextBlock(line);
    if (next.done) throw Errors.invalidUpload(`'${label}' is empty: a header row with the column names is required`);
    let block = next.value;
    if (first) {
      if (block[0] === 0xef && block[1] === 0xbb && block[2] === 0xbf) {
        decided = stats.encoding = 'utf-8';
        block = block.subarray(3);
      } else if ((block[0] === 0xff && block[1] === 0xfe) || (block[0] === 0xfe && block[1] === 0xff)) {
        throw Errors.invalidUpload(`'${label}' is UTF-16; save it as UTF-8 or Latin-1`);
      }
    }
    block = normalize(block);
    for (let pos = 0; pos < block.length; ) {
      const nl = block.indexOf(10, pos);
      let end = nl;
      if (end > pos && block[end - 1] === 13) end--;
      line++;
      if (end > pos) {
        headerText = block.toString('utf8', pos, end);
        rest = block.subarray(nl + 1);
        break;
      }
      pos = nl + 1;
    }
  }
  const delimiter = sniffDelimiter(headerText);
  if (Buffer.byteLength(headerText) > maxRecordBytes) throw recordTooLong(line);
  const header = readHeader(headerText, delimiter, label, maxColumns);
  const expected = header.length;

  const ragged = (at: number, fields: number) =>
    Errors.invalidUpload(`line ${at} of '${label}' has ${fields} field${fields === 1 ? '' : 's'} but the header has ${expected}`);

  // Fast path, in place: counts fields per line, drops CR before LF and blank lines.
  const delimiterByte = delimiter.charCodeAt(0);
  const passThrough = (b: Buffer): Buffer => {
    const k = expected - 1;
    const len = b.length;
    let w = 0;
    let lineStart = 0;
    let cellStart = 0;
    let count = 0;
    for (let r = 0; r < len; r++) {
      const c = b[r]!;
      if (c === delimiterByte) {
        count++;
        if (w - cellStart > maxCellBytes) throw cellTooLong(line + 1);
        cellStart = w + 1;
      } else if (c < 14) {
        if (c === 10) {
          line++;
          let end = w;
          if (end > lineStart && b[end - 1] === 13) end--;
          if (end === lineStart) {
            w = lineStart;
            cellStart = w;
            count = 0;
            continue;
          }
          if (end - lineStart > maxRecordBytes) throw recordTooLong(line);
          if (count !== k) throw ragged(line, count + 1);
          if (end - cellStart > maxCellBytes) throw cellTooLong(line);
          b[end] = 10;
          w = end + 1;
          lineStart = cellStart = w;
          count = 0;
          stats.rows++;
          continue;
        }
        if (c === 13 && b[r + 1] !== 10) throw Errors.invalidUpload(`line ${line + 1} of '${label}' has a carriage return outside quotes`);
        if (c === 0) throw Errors.invalidUpload(`line ${line + 1} of '${label}' contains a NUL byte (is it a CSV file?)`);
      }
      b[w++] = c;
    }
    return b.subarray(0, w);
  };

  // csv-parse for the rest of the file once quotes or backslashes appear.
  const escape = cellEscaper(delimiter);
  async function* parsed(first: Buffer): AsyncGenerator<Buffer> {
    const lineOffset = line;
    // The record's length in UTF-16 units bounds its bytes from below; a cell over the limit in bytes is
    // at least maxCellBytes/3 units long, so only such cells are measured exactly.
    const cellUnits = Math.floor(maxCellBytes / 3);
    const toLine = (record: string[], context: InfoRecord): string => {
      if (record.length !== expected) throw ragged(lineOffset + context.lines, record.length);
      for (const cell of record) {
        if (cell.length > cellUnits && Buffer.byteLength(cell) > maxCellBytes) throw cellTooLong(lineOffset + context.lines);
      }
      let out = escape(record[0]!);
      for (let i = 1; i < record.length; i++) out += delimiter + escape(record[i]!);
      return `${out}\n`;
    };
    const options: Options = {
      delimiter,
      relax_column_count: true,
      skip_empty_lines: true,
      // Bounds what csv-parse buffers for one record (a quoted cell over thousands of lines included).
      max_record_size: maxRecordBytes,
      on_record: toLine as unknown as Options['on_record'],
    };
    const parser = parse(options);
    let fedLines = lineOffset;
    const feed = Readable.from(
      (async function* () {
        yield first;
        for (let at = first.indexOf(10); at !== -1; at = first.indexOf(10, at + 1)) fedLines++;
        for (;;) {
          const next = await nextBlock(fedLines);
          if (next.done) break;
          const block = normalize(next.value);
          yield block;
          for (let at = block.indexOf(10); at !== -1; at = block.indexOf(10, at + 1)) fedLines++;
        }
      })(),
    );
    feed.on('error', (error) => parser.destroy(error));
    feed.pipe(parser);
    let batch = '';
    try {
      for await (const text of parser as AsyncIterable<string>) {
        stats.rows++;
        batch += text;
        if (batch.length >= 256 * 1024) {
          yield Buffer.from(batch);
          batch = '';
        }
      }
    } catch (error) {
      if (error instanceof AppError) throw error;
      const e = error as { message?: string; lines?: number; code?: string };
      if (e.code === 'CSV_MAX_RECORD_SIZE') throw recordTooLong(lineOffset + (e.lines ?? 0));
      const where = typeof e.lines === 'number' ? ` near line ${lineOffset + e.lines}` : '';
      throw Errors.invalidUpload(`'${label}' is not valid CSV${where}: ${e.message ?? 'parse error'}`);
    } finally {
      feed.destroy();
    }
    if (batch.length > 0) yield Buffer.from(batch);
  }

  async function* lines(): AsyncGenerator<Buffer> {
    let block = rest;
    for (;;) {
      if (block === undefined) {
        const next = await nextBlock(line);
        if (next.done) break;
        block = normalize(next.value);
      }
      if (block.length > 0) {
        if (block.indexOf(QUOTE) !== -1 || block.indexOf(BACKSLASH) !== -1) {
          yield* parsed(block);
          break;
        }
        const out = passThrough(block);
        if (out.length > 0) yield out;
      }
      block = undefined;
    }
    if (stats.rows === 0) throw Errors.invalidUpload(`'${label}' has a header row but no data rows`);
  }

  return { header, delimiter, lines: lines(), stats };
}
