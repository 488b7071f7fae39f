import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { statfs, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { MultipartFile, Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError, Errors } from '../../domain/errors.js';
import type { UploadFile } from '../../domain/data/data.service.js';
import { p, parseParams } from '../../http/params.js';
import { guard, presentedSession } from '../../http/route.js';
import type { Services } from '../../services.js';

/** `Servicefile` (current), `servicefile` (older), also numbered or `[]` when several files are sent. */
const FILE_FIELD = /^servicefile(\d+|\[\d*\])?$/i;

/**
 * POST /data: reads the multipart stream itself so each file goes straight into the database as it
 * arrives. A file that comes before `session`/`job_id` are known is spooled to a temporary file (bounded
 * by the upload limit) and stored once they are; files after that stream directly.
 */
export async function receiveUpload<S extends z.ZodType>(
  request: FastifyRequest,
  services: Services,
  options: { params: S; expectedFiles: (params: z.infer<S>) => number | undefined },
): Promise<string> {
  if (!request.isMultipart()) throw Errors.invalidParameter('Servicefile', 'send the CSV file as multipart/form-data');
  const fields: Record<string, unknown> = { ...(request.query as Record<string, unknown>) };
  const parts = request.parts()[Symbol.asyncIterator]();
  const spooled: { label: string; file: string; truncated: boolean }[] = [];
  const ready = () => presentedSession(request, fields) !== undefined && fields.job_id !== undefined && fields.job_id !== '';
  const addField = (part: Multipart) => {
    if (part.type === 'field') fields[part.fieldname] = typeof part.value === 'string' ? part.value : String(part.value);
  };
  const checkFileField = (part: MultipartFile) => {
    if (!FILE_FIELD.test(part.fieldname)) {
      part.file.resume();
      throw Errors.invalidParameter(part.fieldname, "is not a file field of this upload; send the CSV as 'Servicefile'");
    }
  };
  const asUpload = (part: MultipartFile): UploadFile => ({
    label: part.filename || part.fieldname,
    stream: part.file,
    truncated: () => part.file.truncated,
  });

  try {
    let first: MultipartFile | undefined;
    while (!first) {
      const next = await parts.next();
      if (next.done) break;
      const part = next.value;
      if (part.type === 'field') {
        addField(part);
        continue;
      }
      checkFileField(part);
      if (ready()) {
        first = part;
        break;
      }
      await ensureSpoolRoom(part, services.data.uploadLimitBytes);
      const file = path.join(os.tmpdir(), `mtcs-upload-${randomBytes(8).toString('hex')}.csv`);
      spooled.push({ label: part.filename || part.fieldname, file, truncated: false });
      await pipeline(part.file, createWriteStream(file));
      spooled[spooled.length - 1]!.truncated = part.file.truncated;
    }

    const caller = await guard(request, 'session', fields);
    const params = parseParams(options.params, fields);
    const jobId = (params as { job_id: number }).job_id;

    async function* files(): AsyncGenerator<UploadFile> {
      for (const s of spooled) yield { label: s.label, stream: createReadStream(s.file), truncated: () => s.truncated };
      if (first) yield asUpload(first);
      for (let next = await parts.next(); !next.done; next = await parts.next()) {
        const part = next.value;
        if (part.type === 'field') {
          addField(part);
          continue;
        }
        checkFileField(part);
        yield asUpload(part);
      }
    }

    const stored = await services.data.upload(caller!, {
      jobId,
      files: files(),
      get expectedFiles() {
        return options.expectedFiles(parseParams(options.params, fields));
      },
    });
    return `Data stored for job ${jobId}: ${stored.rows} rows, ${stored.columns} columns from ${stored.files} file${stored.files === 1 ? '' : 's'}`;
  } catch (error) {
    // A cut multipart body surfaces as a stream error; it is the client's upload that failed.
    if (!(error instanceof AppError) && /Unexpected end of form|Part terminated early|aborted/i.test((error as Error)?.message ?? '')) {
      throw Errors.invalidUpload('the upload was cut off before it ended; nothing was stored');
    }
    throw error;
  } finally {
    await Promise.all(spooled.map((s) => unlink(s.file).catch(() => undefined)));
  }
}

/**
 * A spooled file may grow to the upload limit: refuse it up front when the temporary directory's disk
 * has less free space than that, rather than fill the disk and fail halfway.
 */
async function ensureSpoolRoom(part: MultipartFile, limitBytes: number): Promise<void> {
  const disk = await statfs(os.tmpdir());
  const free = disk.bavail * disk.bsize;
  if (free >= limitBytes) return;
  part.file.resume();
  // The caller is not authenticated yet: name the public limit, not the server's free space.
  throw Errors.unavailable(
    `not enough free disk space to receive an upload of up to ${Math.round(limitBytes / 1024 / 1024)} MB; try again later, or send session and job_id before Servicefile so the file streams straight to the database`,
  );
}

/** Comma-separated text, or a JSON array of strings. */
export function listOf(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return parsed.map((v) => String(v));
    } catch {
      // Falls back to the comma form.
    }
  }
  return text.split(',').map((s) => s.trim());
}

/** Parameters of PUT /data that are not `{column-name}` fields. */
const PUT_PARAMETERS = new Set(['session', 'tz', 'output', 'job_id', 'period', 'type', 'file']);

/** The `{column-name}` fields of a PUT /data request, as text. */
export function columnFields(raw: Record<string, unknown>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (PUT_PARAMETERS.has(key)) continue;
    if (typeof value === 'string') fields[key] = value;
    else if (typeof value === 'number') fields[key] = String(value);
  }
  return fields;
}

/** GET /data type=0 parameters of the 4.5 table, shared by both versions. */
export const rowsParams = {
  job_id: p.id(),
  output: p.flag(),
  progress: p.flag(),
  limit: p.int().refine((v) => v >= 0, { error: 'must be 0 (no limit) or a positive number' }),
  insight: p.int().refine((v) => v >= 0 && v <= 2, { error: 'must be 0, 1 or 2' }),
  alter: p.number(),
  // p.text: legacy forms post an empty `estimate`, which p.string().optional() would refuse.
  estimate: p.text(200),
  /** Addition: 1 adds each output row's prediction-interval columns (`<column>_lo80`, `_hi80`, `_lo95`, `_hi95`). */
  intervals: p.flag(),
};

export const probability = () => p.number().refine((v) => v >= 0 && v <= 1, { error: 'must be a number between 0 and 1' });
