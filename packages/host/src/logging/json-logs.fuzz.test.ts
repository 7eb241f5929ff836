import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createHostPaths } from '../paths/host-paths.js';
import { HostSettingsSchema } from '../settings/schema.js';
import { fuzzOptions } from '../test-support/index.js';
import { createHostLogging, serilogWarnings, type HostLogging } from './create-logging.js';
import type { WorkerIdentity } from './template.js';

// JSON lines (docs/logging.md "JSON lines"): a File sink whose `Args:formatter` names one of
// Serilog's JSON formatters writes one JSON object per line, whatever the message holds.

let dir: string | undefined;
let logging: HostLogging | undefined;
afterEach(async () => {
  await logging?.close();
  logging = undefined;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const COMPACT = 'Serilog.Formatting.Compact.CompactJsonFormatter, Serilog.Formatting.Compact';
const RENDERED = 'Serilog.Formatting.Compact.RenderedCompactJsonFormatter, Serilog.Formatting.Compact';
const JSON_FORMATTER = 'Serilog.Formatting.Json.JsonFormatter, Serilog';

function setUp(formatter: unknown, worker: WorkerIdentity = { ProcessId: 4321, WorkerId: 3 }) {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-jsonlog-'));
  const settings = HostSettingsSchema.parse({
    Serilog: {
      MinimumLevel: 'Debug',
      WriteTo: [{ Name: 'File', Args: { path: '../log/app.log', formatter } }],
    },
  });
  logging = createHostLogging(settings, createHostPaths(path.join(dir, 'app'), {}), { quiet: true, worker });
  return logging.logger;
}

async function lines(): Promise<string[]> {
  await logging!.close();
  const text = fs.readFileSync(path.join(dir!, 'log', 'app.log'), 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n');
}

/** Reads a message template back as a Serilog reader shows it: doubled braces are one brace. */
const unTemplate = (template: string) => template.replace(/\{\{|\}\}/g, (b) => b[0]!);

describe('JSON formatters', () => {
  it('CompactJsonFormatter: @t, @mt, @l except for Information, @x, and the properties with the worker', async () => {
    const logger = setUp(COMPACT);
    logger.child('wwwroot').info('served {x}', { Path: '/a.html' });
    logger.warn('slow');
    logger.error('failed', new Error('boom'));
    logger.info('meta', { '@odd': 1 });
    const [info, warn, error, odd] = (await lines()).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(info).toEqual({
      '@t': expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      '@mt': 'served {{x}}',
      SourceContext: 'wwwroot',
      Path: '/a.html',
      ProcessId: 4321,
      WorkerId: 3,
    });
    expect(warn).toMatchObject({ '@mt': 'slow', '@l': 'Warning' });
    expect(error).toMatchObject({
      '@mt': 'failed',
      '@l': 'Error',
      '@x': expect.stringMatching(/^Error: boom\n\s+at /),
    });
    // A property named with `@` is not taken for a field: Serilog doubles the `@`.
    expect(odd).toMatchObject({ '@@odd': 1 });
  });

  it('RenderedCompactJsonFormatter: @m and @i instead of @mt', async () => {
    const logger = setUp(RENDERED);
    logger.debug('a {b}');
    logger.debug('a {b}');
    logger.debug('c');
    const [one, two, three] = (await lines()).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(one).toEqual({
      '@t': expect.any(String),
      '@m': 'a {b}',
      '@i': expect.stringMatching(/^[0-9a-f]{8}$/),
      '@l': 'Debug',
      ProcessId: 4321,
      WorkerId: 3,
    });
    expect(two!['@i']).toBe(one!['@i']);
    expect(three!['@i']).not.toBe(one!['@i']);
  });

  it('JsonFormatter: Timestamp, Level, MessageTemplate, RenderedMessage, Properties, Exception', async () => {
    const logger = setUp({ type: JSON_FORMATTER });
    logger.child('http').info('GET {x}');
    logger.error('failed', new Error('boom'));
    const [info, error] = (await lines()).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(info).toEqual({
      Timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      Level: 'Information',
      MessageTemplate: 'GET {{x}}',
      RenderedMessage: 'GET {x}',
      Properties: { SourceContext: 'http', ProcessId: 4321, WorkerId: 3 },
    });
    expect(error).toMatchObject({ Level: 'Error', Exception: expect.stringMatching(/^Error: boom\n/) });
  });

  it('hides passwords in the message, the properties and the exception, and the line stays JSON', async () => {
    const logger = setUp(COMPACT, { ProcessId: 1 });
    logger.warn('connect Server=db;Password="p;w\\"d";x', { url: 'redis://u:sekret1@h:1' });
    logger.error('failed', new Error('mysql://root:sekret2@db/x'));
    const text = (await lines()).join('\n');
    expect(text).not.toMatch(/sekret|p;w/);
    for (const l of text.split('\n')) expect(() => JSON.parse(l) as unknown).not.toThrow();
  });

  it('an unknown formatter is a warning that names it, and the sink writes its template', async () => {
    const settings = HostSettingsSchema.parse({
      Serilog: {
        WriteTo: [
          { Name: 'Console', Args: { formatter: 'Serilog.Formatting.Elasticsearch.ElasticsearchJsonFormatter, X' } },
          { Name: 'Async', Args: { configure: [{ Name: 'File', Args: { path: 'x', formatter: 'Nope' } }] } },
          { Name: 'File', Args: { path: 'y', formatter: COMPACT } },
        ],
      },
    });
    expect(serilogWarnings(settings.Serilog)).toEqual([
      expect.stringMatching(
        /^Serilog:WriteTo:0: formatter "Serilog\.Formatting\.Elasticsearch\.ElasticsearchJsonFormatter, X" is not supported/,
      ),
      expect.stringMatching(/^Serilog:WriteTo:1:Args:configure:0: formatter "Nope" is not supported/),
    ]);
    const logger = setUp('Serilog.Formatting.Compact.CompactJsonFormatterX');
    logger.info('plain');
    const [warning, plain] = await lines();
    expect(warning).toMatch(
      /WRN\] Serilog:WriteTo:0: formatter "Serilog\.Formatting\.Compact\.CompactJsonFormatterX" is not supported/,
    );
    expect(plain).toMatch(/INF\] plain \[worker 3 pid 4321\]$/);
  });

  it('a text line of a worker names it after the message, unless its template names it', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-jsonlog-'));
    const settings = HostSettingsSchema.parse({
      Serilog: {
        WriteTo: [
          {
            Name: 'File',
            Args: { path: '../log/app.log', outputTemplate: '{WorkerId}/{ProcessId} {Message}{NewLine}' },
          },
        ],
      },
    });
    logging = createHostLogging(settings, createHostPaths(path.join(dir, 'app'), {}), {
      quiet: true,
      worker: { ProcessId: 77, WorkerId: 5 },
    });
    logging.logger.info('hello');
    expect(await lines()).toEqual(['5/77 hello']);
  });

  it('every message, with line breaks, quotes, braces and any Unicode, is one JSON line that gives it back', async () => {
    const odd = fc.constantFrom(
      '\n',
      '\r\n',
      '\u2028',
      '"',
      '\\',
      '{',
      '}',
      '{{',
      '\u0000',
      '\u001b[31m',
      '\ud800',
      'é',
      '😀',
    );
    const message = fc.array(fc.oneof(fc.string({ unit: 'binary' }), odd), { maxLength: 8 }).map((p) => p.join(''));
    const meta = fc.dictionary(
      fc.oneof(fc.string({ maxLength: 6 }), fc.constant('@t')),
      fc.oneof(fc.string(), fc.integer()),
      {
        maxKeys: 3,
      },
    );
    for (const [formatter, field] of [
      [COMPACT, '@mt'],
      [RENDERED, '@m'],
      [JSON_FORMATTER, 'RenderedMessage'],
    ] as const) {
      const logger = setUp(formatter);
      const sent: string[] = [];
      fc.assert(
        fc.property(message, meta, (m, props) => {
          logger.info(m, props);
          sent.push(m);
        }),
        fuzzOptions(100),
      );
      const got = await lines();
      expect(got).toHaveLength(sent.length);
      got.forEach((line, i) => {
        const record = JSON.parse(line) as Record<string, unknown>;
        const text = record[field] as string;
        expect(field === '@mt' ? unTemplate(text) : text).toBe(sent[i]);
        if (formatter === JSON_FORMATTER) expect(unTemplate(record.MessageTemplate as string)).toBe(sent[i]);
      });
      await logging!.close();
      fs.rmSync(dir!, { recursive: true, force: true });
      logging = undefined;
      dir = undefined;
    }
  });
});
