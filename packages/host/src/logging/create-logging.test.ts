import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHostPaths } from '../paths/host-paths.js';
import { HostSettingsSchema } from '../settings/schema.js';
import { createHostLogging, type HostLogging } from './create-logging.js';

let dir: string | undefined;
let logging: HostLogging | undefined;
afterEach(async () => {
  await logging?.close();
  logging = undefined;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Logging over a temporary entry base path `<tmp>/app`; the file sink writes to `<tmp>/log`. */
function setUp(serilog: object, app: object = {}) {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-log-'));
  const settings = HostSettingsSchema.parse({ AppSettings: app, Serilog: serilog });
  logging = createHostLogging(settings, createHostPaths(path.join(dir, 'app'), {}), { quiet: true });
  return logging.logger;
}

const fileSink = (args: object = {}) => ({
  Name: 'File',
  Args: {
    path: '../log/app.log',
    outputTemplate: '{Level:u3} {SourceContext}: {Message:lj}{NewLine}{Exception}',
    ...args,
  },
});

function logFiles(): string[] {
  const logDir = path.join(dir!, 'log');
  return fs
    .readdirSync(logDir)
    .filter((f) => !f.startsWith('.'))
    .sort();
}

function readLog(): string[] {
  return logFiles()
    .flatMap((f) => fs.readFileSync(path.join(dir!, 'log', f), 'utf8').split(os.EOL))
    .filter((l) => l !== '');
}

describe('the file sink', () => {
  it('writes lines with the output template, the period in the file name, exception stacks, and flushes buffered lines on close', async () => {
    const logger = setUp({
      WriteTo: [
        {
          Name: 'File',
          Args: { path: '../log/app.log', rollingInterval: 'Day', buffered: true, flushToDiskInterval: '01:00:00' },
        },
      ],
    });
    logger.info('host started');
    logger.child('wwwroot').warn('catalog missing');
    logger.error('request failed', new Error('boom'));
    // Buffered for an hour: nothing has reached the file yet.
    expect(readLog()).toEqual([]);
    await logging!.close();
    const stamp = new Date();
    const day = `${stamp.getFullYear()}${String(stamp.getMonth() + 1).padStart(2, '0')}${String(stamp.getDate()).padStart(2, '0')}`;
    expect(logFiles()).toEqual([`app${day}.log`]);
    const lines = readLog();
    expect(lines[0]).toMatch(/^\[\d{2}:\d{2}:\d{2} INF\] host started$/);
    expect(lines[1]).toMatch(/^\[\d{2}:\d{2}:\d{2} WRN\] catalog missing$/);
    expect(lines[2]).toMatch(/^\[\d{2}:\d{2}:\d{2} ERR\] request failed$/);
    expect(lines[3]).toBe('Error: boom');
    expect(lines[4]).toMatch(/^\s+at /);
  });

  it('flushes buffered lines on its flush interval', async () => {
    const logger = setUp({ WriteTo: [fileSink({ buffered: true, flushToDiskInterval: '00:00:00.1' })] });
    logger.info('soon on disk');
    await vi.waitFor(() => expect(readLog()).toEqual(['INF : soon on disk']), { timeout: 5000, interval: 50 });
  });

  it('rolls to numbered files at fileSizeLimitBytes, keeping every line', async () => {
    const logger = setUp({ WriteTo: [fileSink({ rollOnFileSizeLimit: true, fileSizeLimitBytes: 2048 })] });
    for (let i = 0; i < 100; i++) logger.info(`line ${String(i).padStart(3, '0')} ${'x'.repeat(80)}`);
    await logging!.close();
    const files = logFiles();
    expect(files.length).toBeGreaterThanOrEqual(4);
    expect(files).toContain('app.log');
    expect(files).toContain('app.1.log');
    for (const f of files) expect(fs.statSync(path.join(dir!, 'log', f)).size).toBeLessThanOrEqual(2048 + 100);
    const numbered = (f: string) => (f === 'app.log' ? 0 : Number(f.split('.')[1]));
    const inOrder = files
      .sort((a, b) => numbered(a) - numbered(b))
      .flatMap((f) =>
        fs
          .readFileSync(path.join(dir!, 'log', f), 'utf8')
          .trim()
          .split(os.EOL),
      );
    expect(inOrder).toHaveLength(100);
    expect(inOrder.map((l) => l.slice(11, 14))).toEqual(
      Array.from({ length: 100 }, (_, i) => String(i).padStart(3, '0')),
    );
  });

  it('keeps at most retainedFileCountLimit files', async () => {
    const logger = setUp({
      WriteTo: [fileSink({ rollOnFileSizeLimit: true, fileSizeLimitBytes: 1024, retainedFileCountLimit: 2 })],
    });
    for (let i = 0; i < 100; i++) logger.info('y'.repeat(100));
    await logging!.close();
    expect(logFiles().length).toBeLessThanOrEqual(2);
  });
});

describe('levels', () => {
  it('filter by the default minimum and by overrides on the logger label and its children', async () => {
    const logger = setUp({
      MinimumLevel: { Default: 'Warning', Override: { wwwroot: 'Debug', http: 'Error', Microsoft: 'Error' } },
      WriteTo: [fileSink()],
    });
    logger.debug('root debug');
    logger.info('root info');
    logger.warn('root warn');
    const wwwroot = logger.child('wwwroot');
    wwwroot.debug('wwwroot debug');
    wwwroot.child('sync').debug('sync debug');
    logger.child('wwwrootx').info('not a child of wwwroot');
    const http = logger.child('http');
    http.warn('http warn');
    http.error('http error');
    await logging!.close();
    expect(readLog()).toEqual([
      'WRN : root warn',
      'DBG wwwroot: wwwroot debug',
      'DBG wwwroot.sync: sync debug',
      'ERR http: http error',
    ]);
  });

  it('accept MinimumLevel as a plain level and restrictedToMinimumLevel on a sink', async () => {
    const logger = setUp({
      MinimumLevel: 'Debug',
      WriteTo: [fileSink(), fileSink({ path: '../log/errors.log', restrictedToMinimumLevel: 'Error' })],
    });
    logger.debug('d');
    logger.error('e');
    await logging!.close();
    expect(fs.readFileSync(path.join(dir!, 'log', 'app.log'), 'utf8')).toBe(`DBG : d${os.EOL}ERR : e${os.EOL}`);
    expect(fs.readFileSync(path.join(dir!, 'log', 'errors.log'), 'utf8')).toBe(`ERR : e${os.EOL}`);
  });
});

describe('configuration problems', () => {
  it('an unsupported sink, or a File sink without a path, is a warning and the other sinks still work', async () => {
    const logger = setUp({ WriteTo: [{ Name: 'Seq', Args: { serverUrl: 'http://x' } }, { Name: 'File' }, fileSink()] });
    logger.info('still logging');
    await logging!.close();
    expect(readLog()).toEqual([
      'WRN : Serilog:WriteTo:0: sink "Seq" is not supported by this host (Console, File, Async); ignored',
      'WRN : Serilog:WriteTo:1: the File sink has no Args:path; ignored',
      'INF : still logging',
    ]);
  });

  it("unwraps Serilog's Async sink into the sinks it configures", async () => {
    const logger = setUp({ WriteTo: [{ Name: 'Async', Args: { configure: [fileSink(), { Args: {} }] } }] });
    logger.info('through async');
    await logging!.close();
    expect(readLog()).toEqual([
      'WRN : Serilog:WriteTo:0:Args:configure:1: not a sink ({ "Name": ..., "Args": {...} }); ignored',
      'INF : through async',
    ]);
  });

  it('a log path that cannot be created is a warning, not a crash', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-log-'));
    fs.writeFileSync(path.join(dir, 'blocker'), 'a file where a folder should be');
    const settings = HostSettingsSchema.parse({
      Serilog: { WriteTo: [fileSink({ path: '../blocker/app.log' }), fileSink()] },
    });
    logging = createHostLogging(settings, createHostPaths(path.join(dir, 'app'), {}), { quiet: true });
    logging.logger.info('alive');
    await logging.close();
    const lines = readLog();
    expect(lines[0]).toMatch(
      /^WRN : Serilog:WriteTo:0: cannot open the log file .*blocker.app\.log .*; file sink off$/,
    );
    expect(lines[1]).toBe('INF : alive');
  });

  it('hides connection-string passwords in log lines unless ExposeSecretValues is true', async () => {
    let logger = setUp({ WriteTo: [fileSink()] });
    logger.error('cannot connect: Server=db;Uid=ack;Pwd=s3cret;', new Error('Password=s3cret rejected'));
    await logging!.close();
    const hidden = readLog().join('\n');
    expect(hidden).not.toContain('s3cret');
    expect(hidden).toContain('Pwd=***;');
    fs.rmSync(dir!, { recursive: true, force: true });
    logger = setUp({ WriteTo: [fileSink()] }, { Security: { ExposeSecretValues: true } });
    logger.info('Pwd=s3cret;');
    await logging!.close();
    expect(readLog()).toEqual(['INF : Pwd=s3cret;']);
  });

  it('ignores lines logged after close', async () => {
    const logger = setUp({ WriteTo: [fileSink()] });
    logger.info('before');
    await logging!.close();
    expect(() => logger.info('after')).not.toThrow();
    expect(readLog()).toEqual(['INF : before']);
  });
});
