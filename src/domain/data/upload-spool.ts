import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, statfs, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { removeStaleSpoolFiles, spoolFileName } from '../../spool-files.js';
import { Errors } from '../errors.js';
import { openCsv, sizeText, uploadBudget, type CsvDelimiter, type CsvLimits } from './csv-ingest.js';

/**
 * The upload spool (DATA_DIR/spool): every file of an upload is read, checked and converted to COPY
 * lines into a file of its own here while the client sends it, so nothing of the database (transaction,
 * lock, pooled connection, the embedded database's one connection) waits on a client's bytes. Disk is
 * bounded per user, for files sent before any session is known, and in total; a spool file lives only as
 * long as its request, and files a dead process left behind go at the next start (removeStale).
 */

export interface SpoolLimits {
  spoolDir: string;
  userSpoolBytes: number;
  totalSpoolBytes: number;
  anonymousBytes: number;
  anonymousTotalBytes: number;
}

/** A file as the transport hands it over. */
export interface UploadFile {
  label: string;
  stream: AsyncIterable<Buffer>;
  /** True when the transport cut the file at its size limit. */
  truncated?: () => boolean;
}

/** One received file: COPY text-format lines in the file's own delimiter. */
export interface SpooledFile {
  label: string;
  path: string;
  header: string[];
  delimiter: CsvDelimiter;
  rows: number;
  bytes: number;
}

export function createUploadSpool(limits: SpoolLimits, options: { maxUploadBytes: number; csv: CsvLimits }) {
  let total = 0;
  let anonymous = 0;
  const perUser = new Map<number, number>();
  let made: Promise<unknown> | undefined;
  const mb = (bytes: number) => sizeText(bytes);

  const full = () => Errors.unavailable(`the uploads in progress fill the upload spool (${mb(limits.totalSpoolBytes)} in all); try again in a few minutes`);
  const userFull = () =>
    Errors.uploadTooLarge(`your uploads in progress would hold more than ${mb(limits.userSpoolBytes)} at once; wait until they finish, then send this one again`);
  const anonymousFull = () =>
    Errors.uploadTooLarge(
      `a file sent before the session may hold at most ${mb(limits.anonymousBytes)}; send the session and job_id fields before Servicefile (or the session in the query, a cookie or Authorization: Bearer)`,
    );
  const anonymousAllFull = () =>
    Errors.unavailable(
      `files sent before their session fill the ${mb(limits.anonymousTotalBytes)} kept for them; send the session and job_id fields before Servicefile (or the session in the query, a cookie or Authorization: Bearer)`,
    );

  /** Refuses a file up front when the disk cannot hold what it may grow to. */
  async function ensureDiskRoom(need: number) {
    const disk = await statfs(limits.spoolDir);
    if (disk.bavail * disk.bsize >= need) return;
    throw Errors.unavailable(`not enough free disk space to receive an upload of up to ${mb(need)}; try again later`);
  }

  /** One request's files and the spool space they hold. */
  function open() {
    let owner: number | undefined;
    let held = 0;
    const files: SpooledFile[] = [];
    const budget = uploadBudget(options.maxUploadBytes);

    const reserve = (n: number) => {
      if (total + n > limits.totalSpoolBytes) throw full();
      if (owner === undefined) {
        if (held + n > limits.anonymousBytes) throw anonymousFull();
        if (anonymous + n > limits.anonymousTotalBytes) throw anonymousAllFull();
        anonymous += n;
      } else {
        const mine = (perUser.get(owner) ?? 0) + n;
        if (mine > limits.userSpoolBytes) throw userFull();
        perUser.set(owner, mine);
      }
      total += n;
      held += n;
    };

    const release = () => {
      total -= held;
      if (owner === undefined) anonymous -= held;
      else {
        const left = (perUser.get(owner) ?? 0) - held;
        if (left > 0) perUser.set(owner, left);
        else perUser.delete(owner);
      }
      held = 0;
    };

    return {
      files: files as readonly SpooledFile[],

      /** The caller is known: what was spooled anonymously now counts against that user. */
      claim(userId: number) {
        if (owner !== undefined) return;
        const mine = (perUser.get(userId) ?? 0) + held;
        if (mine > limits.userSpoolBytes) throw userFull();
        anonymous -= held;
        perUser.set(userId, mine);
        owner = userId;
      },

      /** Reads one file to the spool, checking it as it arrives; the first bad line refuses it. */
      async add(file: UploadFile): Promise<SpooledFile> {
        made ??= mkdir(limits.spoolDir, { recursive: true });
        await made;
        await ensureDiskRoom(owner === undefined ? limits.anonymousBytes : Math.min(options.maxUploadBytes, limits.userSpoolBytes, limits.totalSpoolBytes));
        const tooLarge = () => Errors.uploadTooLarge(`'${file.label}' exceeds the maximum upload size of ${Math.round(options.maxUploadBytes / 1024 / 1024)} MB`);
        const spooled: SpooledFile = {
          label: file.label,
          path: path.join(limits.spoolDir, spoolFileName('copy')),
          header: [],
          delimiter: ',',
          rows: 0,
          bytes: 0,
        };
        let out: WriteStream | undefined;
        try {
          const csv = await openCsv(file.stream, { label: file.label, budget, limits: options.csv });
          const first = files[0];
          if (first && csv.header.join('\u0000') !== first.header.join('\u0000')) {
            throw Errors.invalidUpload(`'${file.label}' has the columns ${csv.header.join(', ')} but the first file has ${first.header.join(', ')}`);
          }
          spooled.header = csv.header;
          spooled.delimiter = csv.delimiter;
          files.push(spooled);
          out = createWriteStream(spooled.path, { flags: 'wx' });
          await pipeline(
            csv.lines,
            async function* (lines: AsyncIterable<Buffer>) {
              for await (const chunk of lines) {
                reserve(chunk.length);
                spooled.bytes += chunk.length;
                yield chunk;
              }
            },
            out,
          );
          spooled.rows = csv.stats.rows;
        } catch (error) {
          // The file may still be opening: once it is closed, discard() finds it to remove.
          if (out && !out.closed) await once(out, 'close').catch(() => undefined);
          // A file cut at the size limit ends mid-line: report the limit, not the broken last line.
          if (file.truncated?.()) throw tooLarge();
          throw error;
        }
        if (file.truncated?.()) throw tooLarge();
        return spooled;
      },

      /** Removes the spool files and gives their space back; every request ends here, whatever happened. */
      async discard() {
        await Promise.all(files.map((f) => unlink(f.path).catch(() => undefined)));
        files.length = 0;
        release();
      },
    };
  }

  return {
    dir: limits.spoolDir,
    open,
    /** Bytes held now (tests, metrics). */
    usage: () => ({ total, anonymous, users: perUser.size }),

    /**
     * At start: removes spool files left by processes that are gone (this host's dead pids, and this pid
     * itself, a restarted container's), and other hosts' files untouched for a day. Answers how many.
     */
    removeStale: (): Promise<number> => removeStaleSpoolFiles(limits.spoolDir, /copy/),
  };
}

export type UploadSpool = ReturnType<typeof createUploadSpool>;
export type SpoolUpload = ReturnType<UploadSpool['open']>;
