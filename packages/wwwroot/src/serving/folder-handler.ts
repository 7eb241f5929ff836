import type { RawHandler } from '@ack/host';
import { sendProblem } from '@ack/host';
import { wwwrootProblems } from '../problem-codes.js';
import { checkUrlPath, encodeUrlPath } from './url-path.js';
import { send } from './send.js';
import type { Resolution, ServedFolder } from './served-folder.js';

/** A served folder and the URL prefix it answers under (segments, lower case; empty for `/`). */
export interface Mount {
  prefix: readonly string[];
  folder: ServedFolder;
  /** The route label its answers are counted under (docs/operations.md "Metrics"); the module's otherwise. */
  capability?: { readonly route: string };
}

const MAX_REMEMBERED_URL = 1024;

/**
 * The one static-phase handler for every mount (contract screens, static root). The first mount
 * whose prefix matches the path (as the edge decoded it) owns the request, found or not: a longer
 * prefix listed first is never answered by a shorter one (the static root never answers under
 * `/{ContractRequestPath}`). A URL seen before is answered from its remembered resolution once the
 * folder watch (or, where folders are not watched, a stat) says it still holds, without walking
 * folders again.
 */
export function createFolderHandler(mounts: readonly Mount[], maxRemembered = 20_000): FolderHandler {
  const remembered = new Map<string, Resolution & { folder: ServedFolder; mount: Mount }>();
  const prefixes = mounts.map((m) => '/' + m.prefix.join('/'));

  const forget = (absolute: string) => {
    for (const [url, r] of remembered) if (r.absolute === absolute) remembered.delete(url);
  };

  const handler: RawHandler = (req, res, next) => {
    const rawPath = req.ack.rawPath;
    const known = remembered.get(rawPath);
    if (known) {
      if (known.mount.capability) req.ack.answeredBy = known.mount.capability;
      const facts = known.folder.revalidate(known);
      if (facts) return send(req, res, facts);
      remembered.delete(rawPath);
    }

    const decoded = checkUrlPath(req.ack.path, rawPath);
    if (!decoded.ok) {
      if (decoded.status === 404) return next();
      return sendProblem(
        res,
        {
          status: 400,
          code: wwwrootProblems.REQUEST_BAD_PATH.code,
          detail: `The path cannot name a file (${decoded.reason}).`,
        },
        req.method,
      );
    }
    const folded = req.ack.path.folded;
    const mount = mounts.find(
      (m, i) => m.prefix.length === 0 || folded === prefixes[i] || folded.startsWith(prefixes[i] + '/'),
    );
    if (!mount) return next();
    if (mount.capability) req.ack.answeredBy = mount.capability;
    const rest = decoded.segments.slice(mount.prefix.length);
    // A folder's index.html answers `/dir/` (and `/`); `/dir` is redirected to `/dir/` below.
    const result = mount.folder.resolve(rest, decoded.trailingSlash || decoded.segments.length === 0);
    if (result.kind === 'none') return next();
    if (result.kind === 'directory') {
      // A folder without its trailing slash: redirect, so relative links in its index.html resolve.
      const location = encodeUrlPath(decoded.segments, true) + (req.ack.rawQuery ? `?${req.ack.rawQuery}` : '');
      res.statusCode = 301;
      res.setHeader('Location', location);
      res.setHeader('Content-Length', 0);
      res.end();
      return;
    }
    // Long URLs (e.g. padded with `//`, which resolve like short ones) are not remembered, so the
    // memory a client can make us hold stays small.
    if (rawPath.length <= MAX_REMEMBERED_URL) {
      if (remembered.size >= maxRemembered) remembered.delete(remembered.keys().next().value!);
      remembered.set(rawPath, { ...result.resolution, folder: mount.folder, mount });
    }
    send(req, res, result.facts);
  };
  return { handler, forget, remembered: () => remembered.size };
}

export interface FolderHandler {
  handler: RawHandler;
  /** Drops remembered URL resolutions that lead to this file. */
  forget(absolute: string): void;
  remembered(): number;
}
