import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import { JOB_STATUS } from '../jobs/job-status.js';
import { defaultColumns } from './columns.js';
import type { CsvLimits } from './csv-ingest.js';
import type { DataRepository, JobOwner } from './data.repository.js';
import { createUploadSpool, type SpooledFile, type SpoolLimits } from './upload-spool.js';

/*
 * POST /data's half of the data service: an upload is received into the spool (upload-spool.ts), then
 * stored as the job's input; the reads of the data service never touch the spool or a staging table.
 */

export interface UploadsDeps {
  repository: DataRepository;
  maxUploadBytes: number;
  /** The upload spool and the CSV record bounds (config.uploads). */
  uploads: SpoolLimits & CsvLimits;
  /** Told after an upload made a job Pending (the jobs area's signal to a local runner). */
  onQueued?: (jobId: number) => void;
  /** The job, when the caller may reach it (the data service's one access rule). */
  ownedJob: (caller: Caller, jobId: number) => Promise<JobOwner>;
}

export function createUploads({ repository, maxUploadBytes, uploads, onQueued, ownedJob }: UploadsDeps) {
  const spool = createUploadSpool(uploads, { maxUploadBytes, csv: uploads });

  /** Refuses an upload for a job the caller cannot reach, or one that is running, before its file is read. */
  async function checkUploadTarget(caller: Caller, jobId: number): Promise<void> {
    const job = await ownedJob(caller, jobId);
    if (job.status === JOB_STATUS.Running) throw Errors.wrongState(`Job ${jobId} is running; abort it before uploading new data`);
  }

  return {
    /** Where POST /data receives files before they are stored (upload-spool.ts). */
    spool,
    checkUploadTarget,

    /**
     * Stores one received upload (its spooled files, same header) as the job's input, replacing the
     * previous input. The rows go into a staging table first, without the job's lock (on the embedded
     * database in batches, other requests served between them); one short transaction then makes it the
     * job's input and the job Pending. A rejected upload leaves nothing behind and the previous input stays.
     */
    async upload(caller: Caller, input: { jobId: number; files: readonly SpooledFile[]; expectedFiles?: number }) {
      const { jobId, files } = input;
      await checkUploadTarget(caller, jobId);
      const first = files[0];
      if (!first) throw Errors.missingParameter('Servicefile');
      if (input.expectedFiles !== undefined && input.expectedFiles !== files.length) {
        throw Errors.invalidParameter('file', `says ${input.expectedFiles} file${input.expectedFiles === 1 ? '' : 's'} but ${files.length} ${files.length === 1 ? 'was' : 'were'} sent`);
      }
      const width = first.header.length;
      const staging = await repository.stage(width, files, (error, i) => asUploadError(error, files[i]!.label));
      const rows = files.reduce((sum, file) => sum + file.rows, 0);
      try {
        await repository.transaction(async (tx) => {
          const job = await tx.lockJob(jobId);
          if (!job) throw Errors.notFound('Job', jobId);
          if (job.status === JOB_STATUS.Running) throw Errors.wrongState(`Job ${jobId} is running; abort it before uploading new data`);
          await tx.deleteDatasets(jobId, 'input');
          await tx.adoptStaging({ jobId, columns: defaultColumns(first.header), source: first.label, staging, rows });
          await tx.markJobPending(jobId);
        });
      } catch (error) {
        await repository.dropStaging(staging).catch(() => undefined);
        throw error;
      }
      // After the commit, so a runner in this process claims the job at once instead of at its next poll.
      onQueued?.(jobId);
      return { rows, columns: width, files: files.length };
    },

    /** At start: spool files and staging tables a stopped or crashed process left behind. */
    async removeStaleUploads(): Promise<{ files: number; tables: number }> {
      const [removed, tables] = await Promise.all([spool.removeStale(), repository.dropStaleStaging()]);
      return { files: removed, tables };
    },
  };
}

/** Errors Postgres raises on the COPY data itself (class 22) are the file's fault. */
function asUploadError(error: unknown, label: string): unknown {
  const e = error as { code?: string; message?: string };
  if (typeof e?.code === 'string' && e.code.startsWith('22')) return Errors.invalidUpload(`'${label}': ${e.message}`);
  return error;
}
