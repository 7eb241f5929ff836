import os from 'node:os';
import type { ServerResponse } from 'node:http';
import type { IncomingMessage } from 'node:http';
import multer from 'multer';
import { ProblemError } from '../http/problem.js';
import { asExpress } from '../pipeline/express-adapter.js';
import { FileTooLargeError, discardStaged, moveStaged, stageStream, type StagedFile } from './safe-write.js';

/**
 * Receives a `multipart/form-data` upload of text fields and at most one file, streaming the file
 * straight into a staged temporary file (see `safe-write.ts`), never into memory. Used by sync
 * upload (wwwroot) and contract sync (host).
 *
 * Where the file is staged: the folder `stageDir` names from the fields that arrived before it
 * (clients send the fields first), so that committing is a rename in the same folder. When the
 * target is not known yet (the file came first, as handsonapp sends it), the file is staged in the
 * system temporary folder and moved beside its target later by `placeUpload`.
 */

/** Form fields by lower-cased name (form field names are case-insensitive, as in the original). */
export type FormFields = ReadonlyMap<string, string>;

export interface ReceiveUploadOptions {
  /** Most bytes accepted for the file; one more is 413 with nothing kept. */
  maxBytes: number;
  /** Name of the file field (compared case-insensitively). Default `file`. */
  fileField?: string;
  /** Prefix of problem codes, e.g. `sync` gives `sync.file_too_large`. */
  codePrefix: string;
  /**
   * Folder to stage the file in, given the fields so far; undefined when not known yet. Throw a
   * `ProblemError` to refuse the upload (the file is then drained, never written).
   */
  stageDir(fields: FormFields): Promise<string | undefined> | string | undefined;
}

export interface ReceivedUpload {
  fields: FormFields;
  /** The staged file, when the form had one; the caller commits or discards it. */
  file?: StagedFile;
  /** The file name the client gave. */
  fileName?: string;
}

/** Thrown when the client went away mid-body: there is nobody to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super('The client closed the connection before the upload was complete.');
    this.name = 'ClientGoneError';
  }
}

interface StagedInfo {
  staged: StagedFile;
}

/** The staged file multer kept on a file object (what `_handleFile` reported), if any. */
function stagedOf(file: object): StagedFile | undefined {
  return 'staged' in file ? (file.staged as StagedFile | undefined) : undefined;
}

function collectFields(body: unknown): Map<string, string> {
  const fields = new Map<string, string>();
  for (const [name, value] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    const key = name.toLowerCase();
    const text = typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
    if (text !== undefined && !fields.has(key)) fields.set(key, text);
  }
  return fields;
}

function stagingEngine(options: ReceiveUploadOptions, fileField: string): multer.StorageEngine {
  return {
    _handleFile(req, file, cb) {
      const stream = file.stream;
      if (file.fieldname.toLowerCase() !== fileField) {
        stream.resume();
        return cb(new ProblemError({ status: 400, code: `${options.codePrefix}.unexpected_file`, detail: `Only one file, in the field "${fileField}", is accepted.` }));
      }
      void (async () => {
        const dir = (await options.stageDir(collectFields(req.body))) ?? os.tmpdir();
        return stageStream(dir, stream, { maxBytes: options.maxBytes, nameHint: file.originalname || 'upload' });
      })().then(
        (staged) => cb(null, { path: staged.tempPath, size: staged.bytes, staged } as Partial<Express.Multer.File> & StagedInfo),
        (err: unknown) => {
          stream.resume();
          cb(err as Error);
        },
      );
    },
    _removeFile(_req, file, cb) {
      void discardStaged(stagedOf(file)).then(() => cb(null));
    },
  };
}

/**
 * Reads the form. Bad forms are 400, a file over `maxBytes` 413 (codes `<prefix>.invalid_form`,
 * `<prefix>.file_too_large`, ...); a client that disconnects gives `ClientGoneError`. Every
 * temporary file is gone again when this rejects.
 */
export function receiveUpload(req: IncomingMessage, res: ServerResponse, options: ReceiveUploadOptions): Promise<ReceivedUpload> {
  const fileField = (options.fileField ?? 'file').toLowerCase();
  const prefix = options.codePrefix;
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(contentType)) {
    return Promise.reject(new ProblemError({ status: 415, code: `${prefix}.not_multipart`, detail: 'The request must be multipart/form-data.' }));
  }
  const middleware = multer({
    storage: stagingEngine(options, fileField),
    limits: { files: 1, fields: 32, parts: 40, fieldSize: 64 * 1024, fieldNameSize: 200, fileSize: options.maxBytes },
  }).any();
  return new Promise<ReceivedUpload>((resolve, reject) => {
    const e = asExpress(req, res);
    middleware(e.req, e.res, (err?: unknown) => {
      const r = req as IncomingMessage & { body?: unknown; files?: Array<Express.Multer.File & Partial<StagedInfo>> };
      if (err) return reject(translate(err, req, prefix, options.maxBytes));
      const file = r.files?.[0];
      resolve({ fields: collectFields(r.body), file: file?.staged, fileName: file?.originalname });
    });
  });
}

function translate(err: unknown, req: IncomingMessage, prefix: string, maxBytes: number): unknown {
  if (err instanceof ProblemError) return err;
  const e = err as { name?: string; code?: string; message?: string };
  if (err instanceof FileTooLargeError || (e.name === 'MulterError' && e.code === 'LIMIT_FILE_SIZE')) {
    return new ProblemError({ status: 413, code: `${prefix}.file_too_large`, detail: `The file is over ${maxBytes} bytes (Security:MaxContractSyncFileBytes).` });
  }
  if ((req.destroyed && !req.complete) || e.message === 'Request aborted' || e.message === 'Request closed') return new ClientGoneError();
  if (e.name === 'MulterError') return new ProblemError({ status: 400, code: `${prefix}.invalid_form`, detail: e.message });
  // busboy's parse errors ("Unexpected end of form", "Malformed part header", no boundary, ...).
  if (typeof e.message === 'string' && !('errno' in (err as object))) {
    return new ProblemError({ status: 400, code: `${prefix}.invalid_form`, detail: `The multipart form could not be read: ${e.message}` });
  }
  return err;
}

/**
 * Puts a received file beside its target: a no-op when it was staged there already, else a move.
 * Discards the file if that fails.
 */
export async function placeUpload(file: StagedFile, dir: string): Promise<StagedFile> {
  try {
    return await moveStaged(file, dir);
  } catch (err) {
    await discardStaged(file);
    throw err;
  }
}
