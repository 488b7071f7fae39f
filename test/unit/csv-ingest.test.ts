import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { openCsv, uploadBudget, type CsvLimits } from '../../src/domain/data/csv-ingest.js';

/** Reads COPY text-format lines back into cells (the inverse of what COPY would store). */
function fromCopy(text: string, delimiter: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const cells: string[] = [];
      let cell = '';
      for (let i = 0; i < line.length; i++) {
        const ch = line[i]!;
        if (ch === '\\') {
          const next = line[++i]!;
          cell += next === 'n' ? '\n' : next === 'r' ? '\r' : next === 't' ? '\t' : next;
        } else if (ch === delimiter) {
          cells.push(cell);
          cell = '';
        } else cell += ch;
      }
      cells.push(cell);
      return cells;
    });
}

async function ingest(chunks: (string | Buffer)[], limits?: CsvLimits) {
  const csv = await openCsv(
    (async function* () {
      for (const c of chunks) yield Buffer.isBuffer(c) ? Buffer.from(c) : Buffer.from(c);
    })(),
    { label: 't.csv', budget: uploadBudget(1 << 30), ...(limits ? { limits } : {}) },
  );
  let text = '';
  for await (const block of csv.lines) text += block.toString('utf8');
  return { header: csv.header, delimiter: csv.delimiter, rows: fromCopy(text, csv.delimiter), stats: csv.stats };
}

/** Data rows of a csv-parse result (the header dropped). */
const rowsOf = (parsed: unknown) => (parsed as string[][]).slice(1);

/** Splits a text at random places, as a network would. */
const chunked = (text: string, cuts: number[]) => {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let last = 0;
  for (const p of points) {
    parts.push(text.slice(last, p));
    last = p;
  }
  parts.push(text.slice(last));
  return parts;
};

describe('csv ingest', () => {
  const cell = fc.stringMatching(/^[a-z0-9 .\-é]{0,6}$/);
  const quotedCell = fc.oneof(cell, fc.stringMatching(/^[a-z,;"\n\\\t]{0,5}$/));

  it('reads quote-free files (fast path) exactly as csv-parse does, whatever the chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }).chain((width) => fc.tuple(fc.constant(width), fc.array(fc.array(cell, { minLength: width, maxLength: width }), { minLength: 1, maxLength: 20 }))),
        fc.constantFrom(',', ';', '\t'),
        fc.constantFrom('\n', '\r\n'),
        fc.array(fc.nat(), { maxLength: 6 }),
        async ([width, rows], delimiter, eol, cuts) => {
          const header = Array.from({ length: width }, (_, i) => `h${i}`);
          const kept = rows.filter((r) => r.join('') !== '' || width > 1);
          if (kept.length === 0) return;
          const text = [header, ...kept].map((r) => r.join(delimiter)).join(eol) + eol;
          const expected = rowsOf(parse(text, { delimiter, skip_empty_lines: true }));
          if (expected.length === 0) return;
          const result = await ingest(chunked(text, cuts));
          expect(result.header).toEqual(header);
          expect(result.rows).toEqual(expected);
          expect(result.stats.rows).toBe(expected.length);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('reads files with quotes and backslashes (csv-parse path) exactly as csv-parse does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(quotedCell, quotedCell, quotedCell), { minLength: 1, maxLength: 15 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (rows, cuts) => {
          const quote = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
          const text = ['a,b,c', ...rows.map((r) => r.map(quote).join(','))].join('\n') + '\n';
          const expected = rowsOf(parse(text, { skip_empty_lines: true }));
          if (expected.length === 0) return;
          const result = await ingest(chunked(text, cuts));
          expect(result.rows).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('detects Latin-1 after ASCII blocks and hands it on as UTF-8', async () => {
    const result = await ingest([Buffer.from('name;city\nana;x\n'), Buffer.from('luis;Cádiz\n', 'latin1')]);
    expect(result.delimiter).toBe(';');
    expect(result.stats.encoding).toBe('latin1');
    expect(result.rows).toEqual([
      ['ana', 'x'],
      ['luis', 'Cádiz'],
    ]);
  });

  it('names the line of a ragged row in both paths', async () => {
    await expect(ingest(['a,b\n1,2\n\n3\n'])).rejects.toThrow("line 4 of 't.csv' has 1 field but the header has 2");
    await expect(ingest(['a,b\n1,2\n"3",4\n5,6,7\n'])).rejects.toThrow("line 4 of 't.csv' has 3 fields but the header has 2");
  });

  describe('record bounds', () => {
    const small: CsvLimits = { maxCellBytes: 16, maxRecordBytes: 64, maxColumns: 4 };
    const refuses = async (text: string, message: string) => {
      // Every chunking of the file meets the bound at the same line.
      for (const size of [1, 3, 7, 64, text.length]) {
        const chunks = Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
        await expect(ingest(chunks, small), `chunks of ${size}`).rejects.toThrow(message);
      }
    };

    it('refuses a cell over the bound on both paths, naming its line', async () => {
      await refuses('a,b\n1,2\n3,xxxxxxxxxxxxxxxxx\n', "'t.csv' line 3: a cell is longer than 16 bytes");
      await refuses('a,b\n1,2\nxxxxxxxxxxxxxxxxx,3\n', "'t.csv' line 3: a cell is longer than 16 bytes");
      await refuses('a,b\n"1",2\n3,"xxxxxxxxxx,xxxxxx"\n', "'t.csv' line 3: a cell is longer than 16 bytes");
      // At the bound: read.
      expect((await ingest(['a,b\n1,xxxxxxxxxxxxxxxx\n"2","yyyyyyyyyyyyyyyy"\n'], small)).rows).toEqual([
        ['1', 'xxxxxxxxxxxxxxxx'],
        ['2', 'yyyyyyyyyyyyyyyy'],
      ]);
    });

    it('refuses a record over the bound: a quoted cell over many lines, a long line', async () => {
      await refuses(`a,b\n"1",2\n3,"${'x\n'.repeat(40)}"\n`, "'t.csv' line 35: a record is longer than 64 bytes");
      await expect(ingest([`a,b\n1,2\n${'x'.repeat(100)}\n`], small)).rejects.toThrow("'t.csv' line 3: a record is longer than 64 bytes");
      // A line with no end in sight, cut into pieces as a network would.
      const pieces = ['a,b\n1,2\n', ...Array.from({ length: 20 }, () => 'yyyyyyyy')];
      await expect(ingest(pieces, small)).rejects.toThrow("'t.csv' line 3: a line is longer than 64 bytes (is it a CSV file?)");
    });

    it('refuses a header over the column bound', async () => {
      await expect(ingest(['a,b,c,d,e\n1,2,3,4,5\n'], small)).rejects.toThrow("'t.csv' line 1: the header has 5 columns; at most 4 are allowed");
    });
  });
});
