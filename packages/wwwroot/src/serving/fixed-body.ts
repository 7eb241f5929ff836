import crypto from 'node:crypto';
import { chooseEncoding, ENCODINGS, isCompressible, type Encoding } from './encoding.js';
import { compressOnce } from './compression-cache.js';
import { makeRepresentation, type Resource } from './representation.js';

export interface FixedBodyOptions {
  /** Headers on the 200 and the 304 alike (e.g. the manifest's `Ack-Live-Reload`). */
  extraHeaders?: Readonly<Record<string, string>>;
  /** Keep brotli and gzip copies of a text body (`UseResponseComression`). */
  compress?: boolean;
}

/**
 * A response body fixed at start (the shared-file manifest, the browser loader, the htmx sample's
 * assets) as a resource: hashed once into a strong ETag and answered with the same rules as a
 * file, but always whole (no `Range`). With `compress` (`UseResponseComression`), a text body is
 * also compressed once, brotli and gzip, each copy with its own ETag, chosen by the client's
 * `Accept-Encoding` like a file's (see docs/static-files.md).
 */
export function fixedBody(
  body: Buffer,
  contentType: string,
  cacheControl: string,
  options: FixedBodyOptions = {},
): Resource {
  const etagOf = `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const copies = options.compress && isCompressible(contentType) ? compressOnce(body) : {};
  const offered = ENCODINGS.filter((encoding) => copies[encoding] !== undefined);
  const representation = (bytes: Buffer, encoding: Encoding | undefined) =>
    makeRepresentation({
      absolute: undefined,
      size: bytes.length,
      mtimeMs: undefined,
      contentType,
      encoding,
      etagOf,
      policy: [['Cache-Control', cacheControl]],
      negotiated: offered.length > 0,
      extra: Object.entries(options.extraHeaders ?? {}),
      body: bytes,
    });
  const identity = representation(body, undefined);
  const encoded = new Map(offered.map((encoding) => [encoding, representation(copies[encoding]!, encoding)]));
  return {
    ...identity,
    negotiate:
      offered.length > 0
        ? (acceptEncoding) => {
            const encoding = chooseEncoding(acceptEncoding, offered);
            return encoding ? encoded.get(encoding)! : identity;
          }
        : undefined,
  };
}
