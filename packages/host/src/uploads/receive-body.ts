import { PassThrough } from 'node:stream';
import type { Request, Response } from 'express';
import { ProblemError } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import { bodyTooLarge } from '../http/body-bound.js';
import { ClientGoneError } from './receive-upload.js';
import { FileTooLargeError, discardStaged, stageStream, type StagedFile } from '../fs/safe-write.js';

/**
 * Receives a request whose body is the file itself (docs/sync.md "One big file"), streaming it
 * straight into a staged temporary file in `dir` (see `safe-write.ts`), never into memory. There is
 * no form to parse: each chunk from the socket is counted, hashed and written, which is what makes
 * one big file fast (docs/sync.md "Speed"). Used by the upload flow (`upload-flow.ts`) only.
 */

export interface ReceiveBodyOptions {
  /** Folder to stage the file in (beside its target). */
  dir: string;
  /** Name the temporary file is made from. */
  nameHint: string;
  /** Most bytes of the file; one more is 413 `<prefix>.file_too_large` with nothing kept. */
  maxBytes: number;
  /** Most bytes of the whole body (`Kestrel:Limits:MaxRequestBodySize`); null for no limit. */
  maxBodyBytes: number | null;
  /** Prefix of problem codes, e.g. `sync` gives `sync.file_too_large`. */
  codePrefix: string;
  /** Aborting it refuses the upload with the reason (a `ProblemError`) and removes what was staged. */
  signal?: AbortSignal;
}

/** The body is the file: which of the two limits a body over `bytes` passes, as a problem. */
export function bodyLimit(options: Pick<ReceiveBodyOptions, 'maxBytes' | 'maxBodyBytes' | 'codePrefix'>): {
  bytes: number;
  problem: () => ProblemError;
} {
  const { maxBytes, maxBodyBytes, codePrefix } = options;
  if (maxBodyBytes !== null && maxBodyBytes < maxBytes)
    return { bytes: maxBodyBytes, problem: () => bodyTooLarge(maxBodyBytes) };
  return {
    bytes: maxBytes,
    problem: () =>
      new ProblemError({
        status: 413,
        code: hostProblems.PREFIX_FILE_TOO_LARGE.code(codePrefix),
        detail: `The file is over ${maxBytes} bytes (Security:MaxContractSyncFileBytes).`,
      }),
  };
}

/**
 * Stages the body. A declared `Content-Length` over the limit is refused before a byte is read; a
 * chunked body the moment it passes it (413). A `Content-Encoding` other than `identity` is 415:
 * the bytes stored are the bytes sent. A client that leaves mid-body gives `ClientGoneError`; an
 * abort (the host stopping) its reason. Whatever fails, the temporary file is gone again, and a
 * refusal before the end of the body asks for the connection to be closed.
 */
export async function receiveBody(req: Request, res: Response, options: ReceiveBodyOptions): Promise<StagedFile> {
  const limit = bodyLimit(options);
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  // The body is not read after a refusal; the connection guard closes the connection after the answer.
  const closeUnread = () => {
    if (!req.complete) req.resume();
  };
  if (encoding !== 'identity') {
    closeUnread();
    throw new ProblemError({
      status: 415,
      code: hostProblems.REQUEST_ENCODING_UNSUPPORTED.code,
      detail: `The file is stored as it is sent: the content encoding "${encoding}" is not taken here.`,
    });
  }
  if (Number(req.headers['content-length'] ?? 0) > limit.bytes) {
    closeUnread();
    throw limit.problem();
  }
  if (options.signal?.aborted) throw options.signal.reason;

  // The request is fed to the staging write through a stream of its own, so that a failure ends
  // that stream (and the write, which removes its file) without destroying the request: the
  // refusal can still be answered.
  const source = new PassThrough({ highWaterMark: 1024 * 1024 });
  // Its failure is read from the staging write (or `failure`), never an unhandled 'error' event.
  source.on('error', () => undefined);
  let failure: unknown;
  const stop = (reason: unknown) => {
    if (failure !== undefined) return;
    failure = reason;
    req.unpipe(source);
    source.destroy(reason instanceof Error ? reason : new Error(String(reason)));
  };
  const onAbort = () => stop(options.signal?.reason);
  // Over HTTP/2 a stream the client cancels (RST_STREAM) still ends its request as if whole; only
  // `aborted` tells it from an ended one. The body has no framing of its own to show a cut.
  const aborted = () => req.aborted || req.readableAborted;
  const onGone = () => {
    if (!req.complete || aborted()) stop(new ClientGoneError());
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  req.on('error', onGone);
  req.once('aborted', onGone);
  req.once('close', onGone);
  req.pipe(source);
  // A client may have left while the targets were resolved, before these listeners were there.
  if (req.destroyed || req.socket?.destroyed || aborted()) onGone();
  try {
    if (failure !== undefined) throw failure;
    const declared = Number(req.headers['content-length']);
    const staged = await stageStream(options.dir, source, {
      maxBytes: limit.bytes,
      nameHint: options.nameHint,
      // HTTP/1.1's parser hands over each chunk as a fresh copy, which no one else holds.
      bigBody: Number.isSafeInteger(declared)
        ? { declaredBytes: declared, chunksOwned: req.httpVersionMajor === 1 }
        : undefined,
    });
    if (failure !== undefined || aborted()) {
      await discardStaged(staged);
      throw failure ?? new ClientGoneError();
    }
    return staged;
  } catch (err) {
    const reason = failure ?? err;
    closeUnread();
    throw reason instanceof FileTooLargeError ? limit.problem() : reason;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    req.off('error', onGone);
    req.off('aborted', onGone);
    req.off('close', onGone);
  }
}
