import type { MultipartFile, Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Caller } from '../../domain/caller.js';
import { AppError, Errors } from '../../domain/errors.js';
import { p, parseParams } from '../../http/params.js';
import { guard, presentedSession } from '../../http/route.js';
import type { Services } from '../../services.js';

/** `Servicefile` (current), `servicefile` (older), also numbered or `[]` when several files are sent. */
const FILE_FIELD = /^servicefile(\d+|\[\d*\])?$/i;

/**
 * POST /data: every file is received into the upload spool (checked as it arrives, refused at its first
 * bad line), and stored only once the whole request is in, so no database work waits on the client's
 * bytes. The caller is authenticated as soon as a session is presented (query, cookie, bearer, or a field
 * before the file); a file that comes before any session gets only the small anonymous allowance.
 */
export async function receiveUpload<S extends z.ZodType>(
  request: FastifyRequest,
  services: Services,
  options: { params: S; expectedFiles: (params: z.infer<S>) => number | undefined },
): Promise<string> {
  if (!request.isMultipart()) throw Errors.invalidParameter('Servicefile', 'send the CSV file as multipart/form-data');
  const fields: Record<string, unknown> = { ...(request.query as Record<string, unknown>) };
  const upload = services.data.spool.open();
  let caller: Caller | undefined;
  let checkedJob = false;
  const addField = (part: Multipart) => {
    if (part.type === 'field') fields[part.fieldname] = typeof part.value === 'string' ? part.value : String(part.value);
  };
  /** Who sends, as soon as a session is presented; whether the job is theirs, as soon as job_id is there too. */
  const identify = async () => {
    if (!caller && presentedSession(request, fields) !== undefined) {
      caller = (await guard(request, 'session', fields))!;
      upload.claim(caller.userId);
    }
    const jobId = Number(fields.job_id);
    if (caller && !checkedJob && Number.isSafeInteger(jobId) && jobId > 0) {
      await services.data.checkUploadTarget(caller, jobId);
      checkedJob = true;
    }
  };

  try {
    await identify();
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        addField(part);
        continue;
      }
      if (!FILE_FIELD.test(part.fieldname)) {
        part.file.resume();
        throw Errors.invalidParameter(part.fieldname, "is not a file field of this upload; send the CSV as 'Servicefile'");
      }
      await identify();
      await upload.add(asUpload(part));
    }

    caller ??= (await guard(request, 'session', fields))!;
    upload.claim(caller.userId);
    const params = parseParams(options.params, fields);
    const jobId = (params as { job_id: number }).job_id;
    const stored = await services.data.upload(caller, { jobId, files: upload.files, expectedFiles: options.expectedFiles(params) });
    return `Data stored for job ${jobId}: ${stored.rows} rows, ${stored.columns} columns from ${stored.files} file${stored.files === 1 ? '' : 's'}`;
  } catch (error) {
    // A cut multipart body surfaces as a stream error; it is the client's upload that failed.
    if (!(error instanceof AppError) && /Unexpected end of form|Part terminated early|aborted|premature close/i.test((error as Error)?.message ?? '')) {
      throw Errors.invalidUpload('the upload was cut off before it ended; nothing was stored');
    }
    throw error;
  } finally {
    await upload.discard();
  }
}

const asUpload = (part: MultipartFile) => ({
  label: part.filename || part.fieldname,
  stream: part.file,
  truncated: () => part.file.truncated,
});

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
