// Why this file is long: reading a multipart form is one state machine over busboy's events
// (fields, files, limits, the client leaving, the host stopping); its pieces share that state.
import { createRequire } from 'node:module';
import { type Transform, pipeline, type Writable } from 'node:stream';
import type { Request, Response } from 'express';
import type multer from 'multer';
import { ProblemError } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import { BodyCounter } from '../http/body-bound.js';
import { fileSystemProblem } from '../http/file-system-problem.js';
import { FileTooLargeError, discardStaged, stageStream, type StagedFile } from '../fs/safe-write.js';
import { StagingGate, stageUnflushed } from '../fs/batch-staging.js';

// multer loads with the first upload, not with the host (docs/architecture.md, "What loads only when used").
const requireCjs = createRequire(import.meta.url);
let multerModule: typeof multer | undefined;
const loadMulter = () => (multerModule ??= requireCjs('multer') as typeof multer);

/**
 * Receives a `multipart/form-data` upload of text fields and at most one file, streaming the file
 * straight into a staged temporary file (see `safe-write.ts`), never into memory. Used by the
 * upload flow (`upload-flow.ts`) only.
 *
 * Parsing is multer's (docs/sync.md "The upload flow"): it owns every listener on the parser and on
 * each file stream, so a broken, duplicated or cut-off part reaches us as an error, never as an
 * unhandled `'error'` event. What we add around it:
 * - a counting stream in front of the parser: past `maxBodyBytes` (Kestrel's `MaxRequestBodySize`)
 *   the answer is 413 at once, chunked or not, without reading the rest;
 * - a storage engine that stages the file beside its target when the fields that name the target
 *   came first (committing is then a rename in the same folder), else in `stagingDir`, a folder
 *   the start-up sweep covers;
 * - one settle point: the first failure (a parser error, the limit, the host stopping, the client
 *   leaving) answers, after every staged file is removed again.
 */

/** Form fields by lower-cased name (form field names are case-insensitive, as in the original). */
export type FormFields = ReadonlyMap<string, string>;

/** Every value of each field so far, in the order sent, by lower-cased name (a batch repeats fields). */
export interface FormFieldValues {
  get(name: string): readonly string[] | undefined;
}

/** Where one file of a batch goes: a folder to stage it in, or why this file alone is refused. */
export type BatchFileTarget = { dir: string } | { refused: ProblemError };

/** One file part of a batch, in the order sent. */
export interface ReceivedBatchFile {
  index: number;
  /** The staged file; absent when this file was refused (`refused` says why). */
  file?: StagedFile;
  refused?: ProblemError;
}

export interface ReceiveUploadOptions {
  /** Most bytes accepted for the file; one more is 413 with nothing kept. */
  maxBytes: number;
  /** Most bytes of the whole body (`Kestrel:Limits:MaxRequestBodySize`); null for no limit. */
  maxBodyBytes: number | null;
  /** Name of the file field (compared case-insensitively). Default `file`. */
  fileField?: string;
  /** Prefix of problem codes, e.g. `sync` gives `sync.file_too_large`. */
  codePrefix: string;
  /** Where a file waits whose fields have not arrived yet. */
  stagingDir: string;
  /**
   * Folder to stage the file in, given the fields so far; undefined when not known yet. Throw a
   * `ProblemError` to refuse the upload (nothing is written).
   */
  stageDir(fields: FormFields): Promise<string | undefined> | string | undefined;
  /** Aborting it refuses the upload with the reason (a `ProblemError`) and removes what was staged. */
  signal?: AbortSignal;
  /**
   * A batch (docs/sync.md "Batch upload"): up to `maxFiles` files, each placed by `stageFile` from
   * the fields sent before it. A file `stageFile` refuses, or one over `maxBytes`, is drained and
   * reported in `files` while the others go on; throwing refuses the whole form.
   */
  batch?: {
    maxFiles: number;
    stageFile(fields: FormFieldValues, index: number): Promise<BatchFileTarget>;
  };
}

export interface ReceivedUpload {
  fields: FormFields;
  /** The staged file, when the form had one; the caller commits or discards it. */
  file?: StagedFile;
  /** The file name the client gave. */
  fileName?: string;
  /** A batch: every file part, in order (the caller commits or discards each staged one). */
  files?: ReceivedBatchFile[];
  /** A batch: every value of each field. */
  values?: FormFieldValues;
}

/** Thrown when the client went away mid-body: there is nobody to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super('The client closed the connection before the upload was complete.');
    this.name = 'ClientGoneError';
  }
}

/** Files of one batch staged at once (each at most 1 MiB in memory). */
const BATCH_FILES_AT_ONCE = 8;
/**
 * A batch's body read ahead of its staging (docs/sync.md "Interrupted writes"): a client's closed
 * connection shows only once the bytes it sent before are read, and a paused socket is not read,
 * so without it a batch of many small files cut by its client would stage every part the kernel
 * still held before ending. 4 MiB is the most the CLI puts in one batch.
 */
const BATCH_READ_AHEAD_BYTES = 4 * 1024 * 1024;

const LIMITS = { files: 1, fields: 32, parts: 40, fieldSize: 64 * 1024, fieldNameSize: 200 };

/**
 * A batch form's text fields (docs/sync.md "Batches"): a path per file and per deletion, each at
 * most `maxFieldBytes` (a path the file system could take), all of them together at most
 * `maxFieldsBytes`. What a batch holds in memory is bounded by these and by the files staged at
 * once; a form over them is refused, not read to its end.
 */
export function batchFormLimits(maxFiles: number) {
  return { maxFields: 2 * maxFiles + 32, maxFieldBytes: 4096, maxFieldsBytes: 1024 * 1024 };
}

/** A batch carries a path field per file (and deletions): room for those beside the files. */
function limitsFor(maxFiles: number | undefined): typeof LIMITS {
  if (maxFiles === undefined) return LIMITS;
  const form = batchFormLimits(maxFiles);
  return {
    ...LIMITS,
    files: maxFiles,
    fields: form.maxFields,
    fieldSize: form.maxFieldBytes,
    parts: 3 * maxFiles + 40,
  };
}

/** multer's options with the hook that feeds its parser (multer 2.5; not in its type definitions yet). */
interface ParserOptions extends multer.Options {
  streamHandler(req: Request, parser: Writable): void;
}

/**
 * Reads the form. Bad forms are 400, a file over `maxBytes` 413 (codes `<prefix>.invalid_form`,
 * `<prefix>.unexpected_file`, `<prefix>.file_too_large`, ...), a body over `maxBodyBytes` 413
 * `request.body_too_large`; a client that disconnects gives `ClientGoneError`. Every temporary
 * file is gone again when this rejects. A refusal before the body was read to its end asks for the
 * connection to be closed.
 */
export function receiveUpload(req: Request, res: Response, options: ReceiveUploadOptions): Promise<ReceivedUpload> {
  const fileField = (options.fileField ?? 'file').toLowerCase();
  const prefix = options.codePrefix;
  if (!/^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '')) {
    return Promise.reject(
      new ProblemError({
        status: 415,
        code: hostProblems.PREFIX_NOT_MULTIPART.code(prefix),
        detail: 'The request must be multipart/form-data.',
      }),
    );
  }

  return new Promise<ReceivedUpload>((resolve, reject) => {
    let settled = false;
    let parser: Writable | undefined;
    let counter: Transform | undefined;
    /** Every staging started, settled or not: what a failure must wait for and remove. */
    const staging = new Set<Promise<StagedFile>>();
    let received: { file: StagedFile; name: string } | undefined;
    const batchFiles: ReceivedBatchFile[] = [];
    // Target folders this batch found missing: their files go to the staging folder at once.
    const missingFolders = new Set<string>();
    /** A batch's files staged at once (docs/sync.md "Batches": memory stays bounded). */
    const gate = new StagingGate(BATCH_FILES_AT_ONCE);
    const limits = limitsFor(options.batch?.maxFiles);
    /** Every text field in the order sent, by lower-cased name: spellings of one name are one field. */
    const fields = new OrderedFields();
    const maxFieldsBytes = options.batch ? batchFormLimits(options.batch.maxFiles).maxFieldsBytes : Infinity;

    const removeStaged = async () => {
      const results = await Promise.allSettled([...staging]);
      await discardStaged(...results.map((r) => (r.status === 'fulfilled' ? r.value : undefined)));
    };
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      unlisten();
      if (counter) req.unpipe(counter);
      // The rest of the body is not read; the connection guard closes the connection after the answer.
      if (!req.complete) req.resume();
      // Ends the parser and the file stream it feeds, which ends the staging write (it removes
      // its own file); the failure reaches multer, which then lets go of the request.
      parser?.destroy(err instanceof Error ? err : new Error(String(err)));
      void removeStaged().then(() => reject(err));
    };
    const onAbort = () => fail(options.signal?.reason);
    const onGone = () => {
      if (!req.complete || req.aborted || req.readableAborted) fail(new ClientGoneError());
    };
    const unlisten = () => {
      options.signal?.removeEventListener('abort', onAbort);
      req.off('aborted', onGone);
      res.off('close', onGone);
    };

    const storage: multer.StorageEngine = {
      _handleFile(_req, file, cb) {
        if (options.batch) return handleBatchFile(options.batch, file, cb);
        const stage = (async () => {
          const dir = (await options.stageDir(fields.first())) ?? options.stagingDir;
          return stageStream(dir, file.stream, { maxBytes: options.maxBytes, nameHint: file.originalname || 'upload' });
        })();
        staging.add(stage);
        stage.then(
          (staged) => {
            received ??= { file: staged, name: file.originalname };
            const info = { staged, size: staged.bytes };
            cb(null, info);
          },
          (err: unknown) => {
            file.stream.resume();
            cb(err instanceof FileTooLargeError ? fileTooLarge(prefix, options.maxBytes) : (err as Error));
          },
        );
      },
      _removeFile(_req, file, cb) {
        if (options.batch) return cb(null); // the staged files are in `batchFiles`, removed by `fail`
        void discardStaged((file as { staged?: StagedFile }).staged).then(() => cb(null));
      },
    };

    /** A batch file: staged where `stageFile` says, or drained and reported when refused or too big. */
    const handleBatchFile = (
      batch: NonNullable<ReceiveUploadOptions['batch']>,
      file: Express.Multer.File,
      cb: (error?: Error | null, info?: Partial<Express.Multer.File>) => void,
    ) => {
      const index = batchFiles.length;
      const entry: ReceivedBatchFile = { index };
      batchFiles.push(entry);
      const refuse = (problem: ProblemError) => {
        entry.refused = problem;
        file.stream.resume();
        return undefined;
      };
      const stage = (async () => {
        const target = await batch.stageFile(fields, index);
        // The form failed (its client gone, say) while this file's target was resolved: the parts
        // the parser had already taken are dropped, never staged.
        if (settled) return void file.stream.resume();
        if ('refused' in target) return refuse(target.refused);
        try {
          // Not flushed yet: the flow flushes the batch's files together before committing any. A
          // folder that does not exist yet is made when the file commits, in the order sent.
          return await stageUnflushed(target.dir, file.stream, {
            gate,
            orIn: options.stagingDir,
            missing: missingFolders,
            maxBytes: options.maxBytes,
            nameHint: file.originalname || 'upload',
          });
        } catch (err) {
          if (err instanceof FileTooLargeError) return refuse(fileTooLarge(prefix, options.maxBytes));
          // A path the file system refuses (a name too long, a file where a folder must be) is this
          // file's fault alone; a full disk or a failing one is everyone's, and ends the form.
          const problem = fileSystemProblem(err);
          if (problem && problem.status < 500) return refuse(new ProblemError(problem));
          throw err;
        }
      })();
      const tracked = stage.then((staged) => (staged ? (entry.file = staged) : undefined));
      staging.add(tracked as Promise<StagedFile>);
      tracked.then(
        () => cb(null, { size: entry.file?.bytes ?? 0 }),
        (err: unknown) => {
          file.stream.resume();
          cb(err as Error);
        },
      );
    };

    const streamHandler = (request: Request, busboy: Writable) => {
      parser = busboy;
      // multer keeps the fields by the name as spelt, which loses their order across spellings:
      // they are also kept here, in the order sent, and counted against the batch's limit.
      busboy.on('field', (name: unknown, value: unknown) => {
        if (settled || typeof name !== 'string' || typeof value !== 'string') return;
        if (fields.add(decodeFormDataName(name), value) > maxFieldsBytes) fail(formTooLarge(prefix, maxFieldsBytes));
      });
      const bound = new BodyCounter(options.maxBodyBytes);
      counter = bound.stream(options.batch ? BATCH_READ_AHEAD_BYTES : undefined);
      request.pipe(counter);
      // Whatever fails between the request and the parser ends up here, never as an 'error' event.
      pipeline(counter, busboy, (err) => {
        if (!err) return;
        request.unpipe(counter);
        if (bound.passed) fail(err);
      });
    };

    const parserOptions: ParserOptions = {
      storage,
      limits,
      fileFilter(_req, file, cb) {
        if (file.fieldname.toLowerCase() === fileField) return cb(null, true);
        cb(
          new ProblemError({
            status: 400,
            code: hostProblems.PREFIX_UNEXPECTED_FILE.code(prefix),
            detail: `Only one file, in the field "${fileField}", is accepted.`,
          }),
        );
      },
      streamHandler,
    };
    const middleware = loadMulter()(parserOptions).any();

    middleware(req, res, (err?: unknown) => {
      if (settled) return;
      if (err === undefined) {
        settled = true;
        unlisten();
        return resolve({
          fields: fields.first(),
          file: received?.file,
          fileName: received?.name,
          ...(options.batch ? { files: batchFiles, values: fields } : {}),
        });
      }
      fail(problemOf(err, req, prefix, limits));
    });
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // The client gone (its connection closed, its HTTP/2 stream reset): the form is failed at once,
    // before the parser reads on through what is still buffered and stages every part of it.
    req.once('aborted', onGone);
    res.once('close', onGone);
    // A client may have left before the form was read at all, while the host was still in front of
    // this route (loading its session from a shared store, say): multer's listeners came too late
    // to hear it, and the parser would wait for ever for a body that is gone (docs/sync.md
    // "Interrupted writes"). Over HTTP/2 a reset stream then reads as ended; only `aborted` tells it.
    if (req.destroyed || req.socket?.destroyed || req.aborted || req.readableAborted) fail(new ClientGoneError());
  });
}

/**
 * The text fields in the order sent, by lower-cased name (form field names are case-insensitive:
 * `filePath`, `FILEPATH` and `filepath` are one field, whose n-th value is the n-th sent). A batch
 * asks for them at each of its files: they are read in place, never copied (docs/sync.md "Speed").
 */
class OrderedFields implements FormFieldValues {
  private readonly byName = new Map<string, string[]>();
  private bytes = 0;

  /** Adds a field; returns the bytes of every field so far (names and values). */
  add(name: string, value: string): number {
    const key = name.toLowerCase();
    const list = this.byName.get(key);
    if (list) list.push(value);
    else this.byName.set(key, [value]);
    this.bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
    return this.bytes;
  }

  get(name: string): readonly string[] | undefined {
    return this.byName.get(name);
  }

  /** The first value of each field. */
  first(): Map<string, string> {
    return new Map([...this.byName].map(([name, values]) => [name, values[0]!] as const));
  }
}

/** A field name as multer reads it (the WHATWG escapes of a form's names reversed). */
function decodeFormDataName(name: string): string {
  return name.replace(/%0A|%0D|%22/gi, (match) =>
    match.toUpperCase() === '%0A' ? '\n' : match.toUpperCase() === '%0D' ? '\r' : '"',
  );
}

/** Maps what multer or the parser reports to the answer; a client that left has none. */
function problemOf(err: unknown, req: Request, prefix: string, limits = LIMITS): unknown {
  if (err instanceof ProblemError || err instanceof ClientGoneError) return err;
  // The staging write refuses the byte over the limit; multer may see that first on the file stream.
  if (err instanceof FileTooLargeError) return fileTooLarge(prefix, err.limit);
  if (!req.complete && (req.destroyed || req.socket?.destroyed)) return new ClientGoneError();
  const e = err as { name?: string; code?: string; message?: string };
  const invalid = (detail: string) =>
    new ProblemError({ status: 400, code: hostProblems.PREFIX_INVALID_FORM.code(prefix), detail });
  if (e.name === 'MulterError') {
    const detail: Record<string, string> = {
      LIMIT_FILE_COUNT:
        limits.files === 1 ? 'Only one file is accepted.' : `At most ${limits.files} files are accepted.`,
      LIMIT_PART_COUNT: `At most ${limits.parts} parts are accepted.`,
      LIMIT_FIELD_COUNT: `At most ${limits.fields} fields are accepted.`,
      LIMIT_FIELD_KEY: 'A field name is too long.',
      LIMIT_FIELD_VALUE: `A field is over ${limits.fieldSize} bytes.`,
    };
    return invalid(detail[e.code ?? ''] ?? `The multipart form could not be read (${e.code}).`);
  }
  // busboy's own findings ("Unexpected end of form", "Malformed part header", ...) and a request
  // stream that failed while still connected: the form as sent cannot be read.
  if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code) && e.code !== 'ECONNRESET') return err; // disk and file system
  return invalid(`The multipart form could not be read: ${e.message ?? 'malformed body'}.`);
}

function formTooLarge(prefix: string, maxBytes: number): ProblemError {
  return new ProblemError({
    status: 413,
    code: hostProblems.PREFIX_FORM_TOO_LARGE.code(prefix),
    detail: `The form's text fields are over ${maxBytes} bytes together; send the batch in smaller parts.`,
  });
}

function fileTooLarge(prefix: string, maxBytes: number): ProblemError {
  return new ProblemError({
    status: 413,
    code: hostProblems.PREFIX_FILE_TOO_LARGE.code(prefix),
    detail: `The file is over ${maxBytes} bytes (Security:MaxContractSyncFileBytes).`,
  });
}
