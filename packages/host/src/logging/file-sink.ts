import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type DailyRotateFile from 'winston-daily-rotate-file';
import type { RollingIntervalName } from '../settings/schema.js';

// Serilog's File sink on winston-daily-rotate-file: the period in the file name (`app20260102.log`
// for Day), a numbered file when the size limit is passed (`app20260102.1.log`), the oldest files
// deleted past `retainedFileCountLimit`, and `buffered` writes held in memory until the next
// `flushToDiskInterval` (or 64 KiB), always flushed by `close()`.

const MESSAGE = Symbol.for('message');

/** moment.js patterns for the period in the file name. */
const DATE_PATTERN: Record<Exclude<RollingIntervalName, 'Infinite'>, string> = {
  Year: 'YYYY',
  Month: 'YYYYMM',
  Day: 'YYYYMMDD',
  Hour: 'YYYYMMDDHH',
  Minute: 'YYYYMMDDHHmm',
};

const BUFFER_LIMIT_BYTES = 64 * 1024;
const CLOSE_WAIT_MS = 5_000;

export interface FileSinkOptions {
  /** Absolute path as configured (`.../log/app.log`); the period goes before the extension. */
  file: string;
  rollingInterval: RollingIntervalName;
  /** Roll to a new numbered file past this size; null: no limit. */
  rollAtBytes: number | null;
  retainedFileCountLimit: number | null;
  /** Flush interval in ms when writes are buffered; undefined: write at once. */
  bufferMs: number | undefined;
  /** winston level of `restrictedToMinimumLevel`. */
  level?: string;
  format: DailyRotateFile.DailyRotateFileTransportOptions['format'];
  onError(err: Error): void;
}

interface LogStream extends NodeJS.EventEmitter {
  write(text: string): void;
  end(callback?: () => void): void;
}

/** A File sink: a winston transport whose `close()` resolves once every file is flushed and closed. */
export interface FileSink extends DailyRotateFile {
  flush(): void;
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- winston ignores the result; create-logging awaits it
  close(): Promise<void>;
}

// winston-daily-rotate-file (and moment with it) loads with the first File sink, not with the host:
// a host that logs to the console only starts without it (docs/architecture.md, "What loads only when used").
const requireCjs = createRequire(import.meta.url);
let Sink: (new (options: FileSinkOptions) => FileSink) | undefined;

export function openFileSink(options: FileSinkOptions): FileSink {
  Sink ??= defineFileSink(requireCjs('winston-daily-rotate-file') as typeof DailyRotateFile);
  return new Sink(options);
}

const defineFileSink = (Base: typeof DailyRotateFile) =>
  class extends Base implements FileSink {
    private pending: string[] = [];
    private pendingBytes = 0;
    private readonly timer: NodeJS.Timeout | undefined;
    private readonly bufferMs: number | undefined;
    private streams = 1;
    private closedStreams = 0;
    private closing: Promise<void> | undefined;
    private readonly expired = new Set<string>();

    constructor(options: FileSinkOptions) {
      // Fail here, where the caller can turn it into a warning, rather than in a later 'error' event.
      fs.mkdirSync(path.dirname(options.file), { recursive: true });
      fs.accessSync(path.dirname(options.file), fs.constants.W_OK);
      const ext = path.extname(options.file);
      const stem = options.file.slice(0, options.file.length - ext.length);
      const timed = options.rollingInterval !== 'Infinite';
      super({
        filename: timed ? `${stem}%DATE%` : stem,
        extension: ext,
        datePattern: timed ? DATE_PATTERN[options.rollingInterval as keyof typeof DATE_PATTERN] : undefined,
        // Without a period, a frequency the rotator does not know keeps the date out of the name.
        frequency: timed ? undefined : 'none',
        maxSize: options.rollAtBytes ?? undefined,
        maxFiles: options.retainedFileCountLimit ?? undefined,
        auditFile: path.join(path.dirname(options.file), `.${path.basename(stem)}-audit.json`),
        eol: '',
        level: options.level,
        format: options.format,
      } as DailyRotateFile.DailyRotateFileTransportOptions);
      this.bufferMs = options.bufferMs;
      const stream = this.stream();
      // The rotator re-emits each file's events; without a listener an 'error' would end the process.
      stream.on('error', (err: Error) => options.onError(err));
      stream.on('close', () => {
        this.closedStreams++;
        this.removeExpired();
      });
      this.on('rotate', () => this.streams++);
      // The rotator deletes files past retainedFileCountLimit at once, which misses a file whose
      // open is still pending (a burst of lines rolls faster than files open): retry once closed.
      this.on('logRemoved', (name: string) => {
        this.expired.add(name);
        this.removeExpired();
      });
      if (this.bufferMs !== undefined) {
        this.timer = setInterval(() => this.flush(), this.bufferMs);
        this.timer.unref();
      }
    }

    private removeExpired(): void {
      for (const name of this.expired) {
        try {
          // A name not on disk yet may still be opening: it stays listed for the next try.
          if (!fs.existsSync(name)) continue;
          fs.rmSync(name, { force: true });
          this.expired.delete(name);
        } catch {
          // Tried again when the next file closes.
        }
      }
    }

    private stream(): LogStream {
      return this.logStream;
    }

    override log(info: Record<string | symbol, unknown>, callback: () => void): void {
      const line = String(info[MESSAGE]);
      if (this.bufferMs === undefined || this.closing) this.stream().write(line);
      else {
        this.pending.push(line);
        this.pendingBytes += line.length;
        if (this.pendingBytes >= BUFFER_LIMIT_BYTES) this.flush();
      }
      callback();
    }

    /** Hands buffered lines to the file, one write each so that size rolling stays exact. */
    flush(): void {
      if (this.pending.length === 0) return;
      const lines = this.pending;
      this.pending = [];
      this.pendingBytes = 0;
      const stream = this.stream();
      for (const line of lines) stream.write(line);
    }

    /**
     * Flushes, ends the current file and resolves once every file written to is closed. winston
     * calls it as a void method; the host awaits the promise (it never rejects) at shut-down.
     */
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- see above
    override close(): Promise<void> {
      this.closing ??= new Promise<void>((resolve) => {
        if (this.timer) clearInterval(this.timer);
        this.flush();
        const stream = this.stream();
        const done = () => {
          clearTimeout(deadline);
          stream.off('close', check);
          this.removeExpired();
          resolve();
        };
        const check = () => {
          if (this.closedStreams >= this.streams) done();
        };
        // Bounded: a file system that never answers must not hold up shut-down for ever.
        const deadline = setTimeout(done, CLOSE_WAIT_MS);
        deadline.unref();
        stream.on('close', check);
        stream.end();
      });
      return this.closing;
    }
  };
