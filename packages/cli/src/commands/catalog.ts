import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { SettingsError } from '@ack/host';
import { createHostPaths, loadHostSettings, moduleJsonPath, readModuleJson } from '@ack/host/settings';
import { loadCatalog, parseWwwrootSettings } from '@ack/wwwroot';
import { EXIT } from '../exit-codes.js';
import { printJsonFailure } from './remote/options.js';

export interface CatalogReport {
  catalog: string;
  items: number;
  /** Items the host will not load (empty fields, duplicates, bad paths). */
  skipped: string[];
  /** Items whose host file does not exist (the request passes on to the next handler). */
  missingTargets: string[];
  /** Items whose host file looks like something that must never be public. */
  sensitiveTargets: string[];
}

/**
 * `ack catalog check`: reads a home's shared-file catalog as the host would at start and reports
 * what the host would skip, targets that do not exist, and targets that must never be public.
 */
export function checkCatalog(appDir: string, catalogOverride?: string): CatalogReport {
  const { settings, file } = loadHostSettings(appDir);
  const paths = createHostPaths(path.dirname(file));
  let catalogFile: string | undefined;
  if (catalogOverride) catalogFile = path.resolve(catalogOverride);
  else {
    const moduleFile = moduleJsonPath(settings, paths, 'wwwroot');
    // Read as the host reads it at start (comments, trailing commas), so the check agrees with start-up.
    const moduleJson = readModuleJson(moduleFile);
    catalogFile = parseWwwrootSettings({ moduleJson, settings, paths, settingsFile: moduleFile }).sharedFileConfigPath;
    if (!catalogFile)
      throw new SettingsError(
        `${moduleFile}: ModuleConfig:SharedFileConfigPath is empty, so the shared-file feature is off`,
      );
  }
  const result = loadCatalog(catalogFile, paths.resolve);
  if (!result.ok) throw new SettingsError(result.reason);
  const { items } = result.catalog;
  return {
    catalog: catalogFile,
    items: items.length,
    skipped: result.notes,
    missingTargets: items.filter((i) => !isFile(i.hostFilePath)).map((i) => `${i.requestPath} → ${i.hostFilePath}`),
    sensitiveTargets: result.refused.map((r) => `${r.requestPath} → ${r.hostFilePath} (${r.reason})`),
  };
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

export function registerCatalog(program: Command): void {
  const catalog = program.command('catalog').description('work with the shared-file catalog');
  catalog
    .command('check')
    .description('report catalog items the host would skip, missing targets and targets that must not be public')
    .option('--app-dir <dir>', 'folder holding appsettings.json (default: the current folder)')
    .option('--catalog <file>', 'check this catalog file instead of the one module.json names')
    .option('--json', 'print the report as JSON')
    .action((opts: { appDir?: string; catalog?: string; json?: boolean }) => {
      let report: CatalogReport;
      try {
        report = checkCatalog(path.resolve(opts.appDir ?? process.cwd()), opts.catalog);
      } catch (err) {
        const message = (err as Error).message.split('\n')[0]!;
        process.stderr.write(`ack: ${message}\n`);
        if (opts.json)
          printJsonFailure(
            { catalog: opts.catalog ?? null, items: 0, skipped: [], missingTargets: [], sensitiveTargets: [] },
            message,
            EXIT.usage,
          );
        process.exit(EXIT.usage);
      }
      const problems = report.skipped.length + report.missingTargets.length + report.sensitiveTargets.length;
      if (opts.json) process.stdout.write(JSON.stringify({ ...report, ok: problems === 0 }, null, 2) + '\n');
      else {
        const lines = [`${report.catalog}: ${report.items} item(s) load`];
        for (const s of report.skipped) lines.push(`skipped: ${s}`);
        for (const m of report.missingTargets) lines.push(`missing target (requests pass on): ${m}`);
        for (const s of report.sensitiveTargets) lines.push(`must not be public: ${s}`);
        if (problems === 0) lines.push('ok');
        process.stdout.write(lines.join('\n') + '\n');
      }
      process.exit(problems === 0 ? EXIT.ok : EXIT.usage);
    });
}
