import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { ProblemError } from '../http/problem.js';
import { bodyTooLarge } from '../http/read-body.js';
import { FileTooLargeError, discardStaged, stageStream, type StagedFile } from './safe-write.js';

/**
 * Receives a `multipart/form-data` upload of text fields and at most one file, streaming the file
 * straight into a staged temporary file (see `safe-write.ts`), never into memory. Used by the
 * upload flow (`upload-flow.ts`) only.
 *
 * Where the file is staged: the folder `stageDir` names from the fields that arrived before it
 * (clients send the fields first), so that committing is a rename in the same folder. When the
 * target is not known yet (the file came first, as handsonapp sends it), the file is staged in
 * `stagingDir`, a folder the start-up sweep covers, and moved beside its target later.
 *
 * Every byte of the body is counted as it is read: past `maxBodyBytes` (Kestrel's
 * `MaxRequestBodySize`) the answer is 413 at once, chunked or not (docs/sync.md).
 */

/** Form fields by lower-cased name (form field names are case-insensitive, as in the original). */
export type FormFields = ReadonlyMap<string, string>;

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

const LIMITS = { files: 1, fields: 32, parts: 40, fieldSize: 64 * 1024, fieldNameSize: 200 };

/**
 * Reads the form. Bad forms are 400, a file over `maxBytes` 413 (codes `<prefix>.invalid_form`,
 * `<prefix>.file_too_large`, ...), a body over `maxBodyBytes` 413 `request.body_too_large`; a
 * client that disconnects gives `ClientGoneError`. Every temporary file is gone again when this
 * rejects. A refusal before the body was read to its end asks for the connection to be closed.
 */
export function receiveUpload(
  req: IncomingMessage,
  res: ServerResponse,
  options: ReceiveUploadOptions,
): Promise<ReceivedUpload> {
  const fileField = (options.fileField ?? 'file').toLowerCase();
  const prefix = options.codePrefix;
  const invalid = (detail: string) => new ProblemError({ status: 400, code: `${prefix}.invalid_form`, detail });
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(contentType)) {
    return Promise.reject(
      new ProblemError({
        status: 415,
        code: `${prefix}.not_multipart`,
        detail: 'The request must be multipart/form-data.',
      }),
    );
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, limits: { ...LIMITS, fieldSize: LIMITS.fieldSize + 1 } });
  } catch (err) {
    return Promise.reject(invalid(`The multipart form could not be read: ${(err as Error).message}`));
  }

  return new Promise<ReceivedUpload>((resolve, reject) => {
    const fields = new Map<string, string>();
    let fileStream: Readable | undefined;
    let staging: Promise<StagedFile | undefined> | undefined;
    let fileName: string | undefined;
    let received = 0;
    let settled = false;

    const detach = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onGone);
      req.off('close', onClose);
      options.signal?.removeEventListener('abort', onAbort);
    };
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      detach();
      req.unpipe();
      if (!req.complete) {
        // The rest of the body is not read: the connection cannot carry another request.
        if (!res.headersSent) res.setHeader('Connection', 'close');
        req.resume();
      }
      fileStream?.destroy(); // ends the staging write, which removes its file
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      parser.destroy();
      // Answer only once the staged file (if any) is removed again.
      void (staging ?? Promise.resolve(undefined))
        .then(
          (file) => discardStaged(file),
          () => undefined,
        )
        .then(() => reject(err));
    };

    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (options.maxBodyBytes !== null && received > options.maxBodyBytes)
        return fail(bodyTooLarge(options.maxBodyBytes));
      if (!parser.write(chunk)) req.pause();
    };
    const onEnd = () => parser.end();
    const onGone = () => fail(new ClientGoneError());
    const onClose = () => {
      if (!req.complete) onGone();
    };
    const onAbort = () => fail(options.signal?.reason);
    parser.on('drain', () => req.resume());

    parser.on('field', (name, value, info) => {
      if (info.nameTruncated) return fail(invalid('A field name is too long.'));
      if (info.valueTruncated) return fail(invalid(`The field "${name}" is over ${LIMITS.fieldSize} bytes.`));
      const key = name.toLowerCase();
      if (!fields.has(key)) fields.set(key, value);
    });
    parser.on('file', (name, stream, info) => {
      if (name.toLowerCase() !== fileField) {
        stream.resume();
        return fail(
          new ProblemError({
            status: 400,
            code: `${prefix}.unexpected_file`,
            detail: `Only one file, in the field "${fileField}", is accepted.`,
          }),
        );
      }
      if (!info.filename) return void stream.resume(); // a file part with no file chosen
      fileStream = stream;
      fileName = info.filename;
      const snapshot = new Map(fields);
      staging = (async () => {
        const dir = (await options.stageDir(snapshot)) ?? options.stagingDir;
        return stageStream(dir, stream, { maxBytes: options.maxBytes, nameHint: info.filename || 'upload' });
      })();
      staging.catch((err: unknown) => {
        stream.resume();
        fail(err instanceof FileTooLargeError ? fileTooLarge(prefix, options.maxBytes) : err);
      });
    });
    parser.on('filesLimit', () => fail(invalid('Only one file is accepted.')));
    parser.on('fieldsLimit', () => fail(invalid(`At most ${LIMITS.fields} fields are accepted.`)));
    parser.on('partsLimit', () => fail(invalid(`At most ${LIMITS.parts} parts are accepted.`)));
    parser.on('error', (err: Error) => fail(invalid(`The multipart form could not be read: ${err.message}`)));
    parser.on('close', () => {
      if (settled) return;
      void (staging ?? Promise.resolve(undefined)).then(
        (file) => {
          if (settled) return void discardStaged(file);
          settled = true;
          detach();
          resolve({ fields, file, fileName });
        },
        () => undefined,
      );
    });

    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onGone);
    req.on('close', onClose);
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function fileTooLarge(prefix: string, maxBytes: number): ProblemError {
  return new ProblemError({
    status: 413,
    code: `${prefix}.file_too_large`,
    detail: `The file is over ${maxBytes} bytes (Security:MaxContractSyncFileBytes).`,
  });
}
