/**
 * Deterministic sales-like CSV for the ingest benchmark: 13 columns (year, month, day, hour, 8 inputs of
 * mixed numeric/categorical kind, one output), about 70 bytes a row. Written in 1 MB chunks so a
 * 3,000,000-row file never sits in memory.
 */
import { createWriteStream, existsSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { mulberry32 } from '../../src/training/testing.js';

export const HEADER = ['year', 'month', 'day', 'hour', 'store', 'product', 'price', 'promo', 'temp', 'rain', 'holiday', 'stock', 'sales'];

export async function generateCsv(file: string, rows: number): Promise<{ bytes: number; rows: number }> {
  if (existsSync(file) && statSync(file).size > 0) return { bytes: statSync(file).size, rows };
  const random = mulberry32(20240601);
  const out = createWriteStream(file);
  let chunk = `${HEADER.join(',')}\n`;
  const start = Date.UTC(2015, 0, 1);
  for (let r = 0; r < rows; r++) {
    const t = new Date(start + r * 3_600_000);
    const store = `STORE-${String(1 + Math.floor(random() * 40)).padStart(3, '0')}`;
    const product = `SKU-${String(Math.floor(random() * 100000)).padStart(6, '0')}`;
    const price = (1 + random() * 999).toFixed(2);
    const promo = random() < 0.2 ? 1 : 0;
    const temp = (random() * 35 - 5).toFixed(2);
    const rain = (random() * 20).toFixed(2);
    const holiday = random() < 0.05 ? 1 : 0;
    const stock = Math.floor(random() * 100000);
    const sales = (random() * 900).toFixed(2);
    chunk += `${t.getUTCFullYear()},${t.getUTCMonth() + 1},${t.getUTCDate()},${t.getUTCHours()},${store},${product},${price},${promo},${temp},${rain},${holiday},${stock},${sales}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
  return { bytes: statSync(file).size, rows };
}
