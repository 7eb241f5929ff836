import fs from 'node:fs';
import path from 'node:path';
import type { RawHandler } from '@ack/host';
import { checkUrlPath, encodeUrlPath } from '../serving/url-path.js';
import { send } from '../serving/send.js';
import { createServedFolder, type ServedFolder } from '../serving/served-folder.js';
import type { ServingEngine } from '../serving/index.js';
import { RELEASES_FOLDER, isReleaseId, keySegments, prefixPaths, releaseDir } from './layout.js';
import type { ReleaseStore } from './store.js';

// Contract screens under a release prefix (docs/releases.md "A pass of a reader" and "Grace for
// removed files"): every answer names its release in `ack-release`; a request naming a release
// still on disk is served from it; a file the live release removed is served from the previous
// one while the grace lasts. Each release is served as its own folder, so every cache keys on that
// release's real paths and one release's bytes never answer another's request.

const MAX_FOLDERS = 64;

export interface ReleaseServingOptions {
  /** The contract folder releases are kept in (`ContractBasePath`). */
  contractDir: string;
  /** Segments from the contract folder to the mount's folder (`[ApplicationID]`). */
  mountSegments: readonly string[];
  /** The mount's URL prefix, lower-case segments (`['view']`). */
  urlPrefix: readonly string[];
  store: ReleaseStore;
  engine: ServingEngine;
}

/** Wraps the folder handler: requests under a release prefix are answered here, others go on to it. */
export function withReleases(options: ReleaseServingOptions, folders: RawHandler): RawHandler {
  const { contractDir, mountSegments, urlPrefix, store, engine } = options;
  const home = path.join(contractDir, RELEASES_FOLDER);
  const urlRoot = '/' + urlPrefix.join('/');
  const served = new Map<string, ServedFolder>();
  const folderOf = (dir: string): ServedFolder => {
    let f = served.get(dir);
    if (!f) {
      if (served.size >= MAX_FOLDERS) served.delete(served.keys().next().value!);
      served.set(dir, (f = createServedFolder(dir, engine.dirs, engine.store)));
    }
    return f;
  };
  // The prefixes with releases, read again when `.ack-releases` changes (one stat a request).
  let seen = -1;
  let prefixes: string[][] = [];
  const prefixesNow = (): string[][] => {
    const st = fs.statSync(home, { throwIfNoEntry: false });
    const stamp = st ? st.mtimeMs : 0;
    if (stamp !== seen) {
      seen = stamp;
      const names = st ? fs.readdirSync(home).filter((n) => !n.startsWith('.')) : [];
      prefixes = names.map(keySegments);
    }
    return prefixes;
  };

  return (req, res, next) => {
    const folded = req.ack.path.folded;
    if (!(urlPrefix.length === 0 || folded === urlRoot || folded.startsWith(urlRoot + '/'))) {
      return folders(req, res, next);
    }
    const decoded = checkUrlPath(req.ack.path, req.ack.rawPath);
    if (!decoded.ok) return folders(req, res, next);
    const rest = decoded.segments.slice(urlPrefix.length);
    const full = [...mountSegments, ...rest];
    // Release prefixes are matched as written on disk (the link's name).
    const segs = prefixesNow().find((p) => p.length <= full.length && p.every((s, i) => s === full[i]));
    if (!segs) return folders(req, res, next);
    const p = prefixPaths(contractDir, segs);
    let live: string;
    try {
      live = path.basename(fs.readlinkSync(p.link));
    } catch (err) {
      // Between the two renames of an adoption the prefix has no link yet and one release with
      // its manifest stands alone: that one is live (docs/releases.md "The switch"), not a 404.
      const alone = (err as NodeJS.ErrnoException).code === 'ENOENT' ? loneRelease(p.home) : null;
      if (!alone) return folders(req, res, next);
      live = alone;
    }
    const inside = full.slice(segs.length);
    const wanted = firstHeader(req.headers['ack-release']);
    const pinned =
      wanted !== undefined && wanted !== live && isReleaseId(wanted) && isFolder(releaseDir(p, wanted)) ? wanted : live;
    res.setHeader('ack-release', pinned);
    const wantIndex = decoded.trailingSlash || decoded.segments.length === 0;
    const result = folderOf(releaseDir(p, pinned)).resolve(inside, wantIndex);
    if (result.kind === 'file') return send(req, res, result.facts);
    if (result.kind === 'directory') {
      res.statusCode = 301;
      res.setHeader(
        'Location',
        encodeUrlPath(decoded.segments, true) + (req.ack.rawQuery ? `?${req.ack.rawQuery}` : ''),
      );
      res.setHeader('Content-Length', 0);
      res.end();
      return;
    }
    // Not in the release: the previous release's file while the grace lasts, else the 404.
    if (pinned !== live || inside.length === 0) return next();
    store.graceLookup(p.prefix, inside.join('/')).then(
      (file) => {
        if (!file) return next();
        const previous = path.relative(p.home, file).split(path.sep)[0]!;
        const found = folderOf(releaseDir(p, previous)).resolve(inside, false);
        if (found.kind === 'file') send(req, res, found.facts);
        else next();
      },
      () => next(),
    );
  };
}

const firstHeader = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim();

/** The one release with a manifest under a prefix's home, or null when there are none or several. */
function loneRelease(home: string): string | null {
  let names: fs.Dirent[];
  try {
    names = fs.readdirSync(home, { withFileTypes: true });
  } catch {
    return null;
  }
  const released = names.filter(
    (d) => d.isDirectory() && isReleaseId(d.name) && names.some((m) => m.name === `${d.name}.json`),
  );
  return released.length === 1 ? released[0]!.name : null;
}

function isFolder(dir: string): boolean {
  return fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false;
}
