import cluster from 'node:cluster';
import winston from 'winston';
import type { HostSettings, LogLevelName, SerilogSettings, SinkSettings } from '../settings/schema.js';
import { DEFAULT_OUTPUT_TEMPLATE, SinkSchema } from '../settings/schema.js';
import { parseTimeSpanMs } from '../settings/time-span.js';
import { exposesSecrets, redactSecretsInText } from '../settings/redact.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { Logger } from './logger.js';
import { LEVEL_RANK, minimumLevelResolver, TO_WINSTON, WINSTON_LEVELS } from './levels.js';
import { compileTemplate, eventProperties, type LogEvent, type Render, type WorkerIdentity } from './template.js';
import { compileJsonFormatter, resolveFormatter } from './json-formatters.js';
import { openFileSink as createFileSink, type FileSink } from './file-sink.js';

export interface HostLogging {
  logger: Logger;
  /**
   * Adds a file that receives the lines of one logger label and its children (a module's
   * `ModuleLogFilePath`), with the rolling and template of the first `File` sink (else Serilog's
   * defaults). The lines still reach the host's own sinks.
   */
  addLabelFile(label: string, file: string, outputTemplate?: string): void;
  /** Flushes buffered sinks and closes files. */
  close(): Promise<void>;
}

export interface LoggingOptions {
  /** No console sink (tests). */
  quiet?: boolean;
  /** The process the lines name; default this one (its pid, and its worker id under `ack serve --workers`). */
  worker?: WorkerIdentity;
}

/** This process: its pid, and the id the primary gave it when it is a worker of `ack serve --workers`. */
export function currentWorker(): WorkerIdentity {
  const id = cluster.isWorker ? cluster.worker?.id : undefined;
  return id === undefined ? { ProcessId: process.pid } : { ProcessId: process.pid, WorkerId: id };
}

/**
 * What a sink's `Args:formatter` means for its lines: a JSON formatter, or the output template
 * (none given, or one this host does not know, with a warning naming it).
 */
export function sinkFormatterWarning(sink: SinkSettings, where: string): string | undefined {
  const formatter = resolveFormatter(sink.Args.formatter);
  if (formatter.kind !== 'unknown') return undefined;
  return `${where}: formatter "${formatter.text}" is not supported by this host (CompactJsonFormatter, RenderedCompactJsonFormatter, JsonFormatter); its lines use the output template`;
}

/**
 * The warnings start-up logs about \`Serilog:WriteTo\` (\`ack check\` prints the same): sinks this
 * host does not have, sinks missing what they need, formatters it does not know.
 */
export function serilogWarnings(serilog: SerilogSettings): string[] {
  const warnings: string[] = [];
  const visit = (sink: SinkSettings, where: string) => {
    const formatterWarning = sinkFormatterWarning(sink, where);
    if (formatterWarning) warnings.push(formatterWarning);
    switch (sink.Name.toLowerCase()) {
      case 'console':
        break;
      case 'file':
        if (!sink.Args.path) warnings.push(`${where}: the File sink has no Args:path; ignored`);
        break;
      case 'async': {
        const inner = Array.isArray(sink.Args.configure) ? sink.Args.configure : [];
        if (inner.length === 0) warnings.push(`${where}: the Async sink has no Args:configure list; ignored`);
        inner.forEach((item, i) => {
          const parsed = SinkSchema.safeParse(item, { jitless: true }); // once, at start: no compiled parser
          if (parsed.success) visit(parsed.data, `${where}:Args:configure:${i}`);
          else warnings.push(`${where}:Args:configure:${i}: not a sink ({ "Name": ..., "Args": {...} }); ignored`);
        });
        break;
      }
      default:
        warnings.push(`${where}: sink "${sink.Name}" is not supported by this host (Console, File, Async); ignored`);
    }
  };
  serilog.WriteTo.forEach((sink, index) => visit(sink, `Serilog:WriteTo:${index}`));
  return warnings;
}

const MESSAGE = Symbol.for('message');
/** Serilog's default for `retainedFileCountLimit`. */
const DEFAULT_RETAINED_FILES = 31;
/** Serilog's default `fileSizeLimitBytes` (1 GB). */
const DEFAULT_FILE_SIZE_LIMIT = 1_073_741_824;
/** Flush interval of a buffered file sink that names none. */
const DEFAULT_FLUSH_MS = 5_000;

/**
 * A winston format that renders the line winston writes: with the sink's JSON formatter when
 * `formatter` names one (docs/logging.md "JSON lines"), else with its output template.
 */
function lineFormat(template: string, formatter: unknown, clean: (t: string) => string, worker: WorkerIdentity) {
  const chosen = resolveFormatter(formatter);
  const render: Render =
    chosen.kind === 'known'
      ? compileJsonFormatter(chosen.name, (e) => eventProperties(e, worker), clean)
      : compileTemplate(template, clean, worker);
  return winston.format((info) => {
    (info as Record<symbol, unknown>)[MESSAGE] = render(info.event as LogEvent);
    return info;
  })();
}

/**
 * Builds the host's logger from the `Serilog` section: `MinimumLevel` (a level, or `Default` plus
 * `Override` by logger label), and the `Console` and `File` sinks of `WriteTo`, each with its
 * `outputTemplate` and `restrictedToMinimumLevel`. Levels are checked before anything is built, so
 * a filtered-out line costs one comparison. Other sink names are reported as warnings.
 */
export function createHostLogging(settings: HostSettings, paths: HostPaths, options: LoggingOptions = {}): HostLogging {
  const serilog = settings.Serilog;
  const clean = exposesSecrets(settings) ? (t: string) => t : redactSecretsInText;
  const worker = options.worker ?? currentWorker();
  const warnings = serilogWarnings(serilog);
  const transports: winston.transport[] = [];
  const fileSinks: FileSink[] = [];
  const reportSinkError = (file: string) => {
    let reported = false;
    return (err: Error) => {
      // One line on stderr: the log file itself cannot carry the news.
      if (!reported) process.stderr.write(`ack: log file ${file}: ${err.message}\n`);
      reported = true;
    };
  };

  const openFileSink = (
    args: SinkSettings['Args'],
    file: string,
    format: winston.Logform.Format,
    level: string | undefined,
  ): FileSink => {
    const limit = args.fileSizeLimitBytes === undefined ? DEFAULT_FILE_SIZE_LIMIT : args.fileSizeLimitBytes;
    return createFileSink({
      file,
      rollingInterval: args.rollingInterval ?? 'Infinite',
      rollAtBytes: args.rollOnFileSizeLimit ? limit : null,
      retainedFileCountLimit:
        args.retainedFileCountLimit === undefined ? DEFAULT_RETAINED_FILES : args.retainedFileCountLimit,
      bufferMs: args.buffered
        ? (args.flushToDiskInterval ? parseTimeSpanMs(args.flushToDiskInterval) : 0) || DEFAULT_FLUSH_MS
        : undefined,
      level,
      format,
      onError: reportSinkError(file),
    });
  };

  const addSink = (sink: SinkSettings, where: string): void => {
    const args = sink.Args;
    const format = lineFormat(args.outputTemplate ?? DEFAULT_OUTPUT_TEMPLATE, args.formatter, clean, worker);
    const level = args.restrictedToMinimumLevel ? TO_WINSTON[args.restrictedToMinimumLevel] : undefined;
    switch (sink.Name.toLowerCase()) {
      case 'console':
        if (!options.quiet) transports.push(new winston.transports.Console({ format, level, eol: '' }));
        break;
      case 'file': {
        if (!args.path) break; // warned by serilogWarnings
        const file = paths.resolve(args.path);
        try {
          const fileSink = openFileSink(args, file, format, level);
          fileSinks.push(fileSink);
          transports.push(fileSink);
        } catch (err) {
          warnings.push(`${where}: cannot open the log file ${file} (${(err as Error).message}); file sink off`);
        }
        break;
      }
      case 'async': {
        // Serilog's Async wrapper (`Args:configure`: a list of sinks): its sinks, written directly.
        // Its sinks, written directly; what is wrong with them is warned by serilogWarnings.
        const inner = Array.isArray(args.configure) ? args.configure : [];
        inner.forEach((item, i) => {
          const parsed = SinkSchema.safeParse(item, { jitless: true }); // once, at start: no compiled parser
          if (parsed.success) addSink(parsed.data, `${where}:Args:configure:${i}`);
        });
        break;
      }
      default:
        break;
    }
  };
  serilog.WriteTo.forEach((sink, index) => addSink(sink, `Serilog:WriteTo:${index}`));

  const base = winston.createLogger({
    levels: WINSTON_LEVELS,
    level: 'verbose', // Filtering happens before winston, per label (see `emit`).
    format: winston.format((info) => info)(),
    transports,
    exitOnError: false,
  });
  base.on('error', (err: Error) => process.stderr.write(`ack: logging failed: ${err.message}\n`));

  const minimumFor = minimumLevelResolver(serilog.MinimumLevel);
  let closed = false;

  const make = (label: string | undefined): Logger => {
    const minimum = minimumFor(label);
    const emit = (level: LogLevelName, message: string, meta?: Record<string, unknown> | Error, error?: Error) => {
      if (closed || LEVEL_RANK[level] < minimum || transports.length === 0) return;
      const event: LogEvent = { time: new Date(), level, message, label };
      if (meta instanceof Error) event.error = meta;
      else if (meta) event.meta = meta;
      if (error) event.error = error;
      base.log({ level: TO_WINSTON[level], message, event });
    };
    return {
      debug: (m, meta) => emit('Debug', m, meta),
      info: (m, meta) => emit('Information', m, meta),
      warn: (m, meta) => emit('Warning', m, meta),
      error: (m, meta, error) => emit('Error', m, meta, error),
      child: (childLabel) => make(label ? `${label}.${childLabel}` : childLabel),
    };
  };

  const logger = make(undefined);
  for (const w of warnings) logger.warn(w);

  const addLabelFile = (label: string, file: string, outputTemplate?: string): void => {
    const fileArgs = serilog.WriteTo.find((w) => w.Name.toLowerCase() === 'file')?.Args;
    const args: SinkSettings['Args'] = fileArgs ?? {
      rollingInterval: 'Day',
      rollOnFileSizeLimit: true,
      fileSizeLimitBytes: 104_857_600,
      buffered: true,
      flushToDiskInterval: '00:00:05',
    };
    const prefix = `${label}.`;
    const onlyLabel = winston.format((info) => {
      const l = (info.event as LogEvent | undefined)?.label;
      return l === label || (l !== undefined && l.startsWith(prefix)) ? info : false;
    })();
    try {
      const fileSink = openFileSink(
        args,
        file,
        winston.format.combine(
          onlyLabel,
          // JSON when the first File sink writes JSON: the access file too (docs/logging.md "JSON lines").
          lineFormat(outputTemplate ?? args.outputTemplate ?? DEFAULT_OUTPUT_TEMPLATE, args.formatter, clean, worker),
        ),
        undefined,
      );
      fileSinks.push(fileSink);
      transports.push(fileSink);
      base.add(fileSink);
    } catch (err) {
      logger.warn(
        `cannot open the log file ${file} of ${label} (${(err as Error).message}); its lines go to the host's sinks only`,
      );
    }
  };

  let closing: Promise<void> | undefined;
  return {
    logger,
    addLabelFile,
    close() {
      closing ??= (async () => {
        closed = true;
        // Let winston hand every line to its sinks, then flush and close the files.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 2_000);
          base.once('finish', () => {
            clearTimeout(timer);
            resolve();
          });
          base.end();
        });
        await Promise.all(fileSinks.map((s) => s.close()));
      })();
      return closing;
    },
  };
}
