import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { compileTemplate, compileTimeFormat, type LogEvent } from './template.js';
import { redactSecretsInText } from '../settings/redact.js';
import { DEFAULT_OUTPUT_TEMPLATE } from '../settings/schema.js';

const at = new Date(2026, 0, 2, 3, 4, 5, 67); // local time, as Serilog writes it
const event = (e: Partial<LogEvent>): LogEvent => ({ time: at, level: 'Information', message: 'hello', ...e });

describe('output templates', () => {
  it('render the default template: time HH:mm:ss, 3-letter level, message, newline', () => {
    const render = compileTemplate(DEFAULT_OUTPUT_TEMPLATE);
    expect(render(event({}))).toBe(`[03:04:05 INF] hello${os.EOL}`);
    const levels = ['Verbose', 'Debug', 'Information', 'Warning', 'Error', 'Fatal'] as const;
    expect(levels.map((level) => render(event({ level })).slice(10, 13))).toEqual([
      'VRB',
      'DBG',
      'INF',
      'WRN',
      'ERR',
      'FTL',
    ]);
  });

  it('render the stack of an Error under {Exception}, with its cause', () => {
    const err = new Error('outer', { cause: new Error('inner') });
    const text = compileTemplate(DEFAULT_OUTPUT_TEMPLATE)(event({ level: 'Error', message: 'failed', error: err }));
    expect(text.startsWith(`[03:04:05 ERR] failed${os.EOL}Error: outer${os.EOL}    at `)).toBe(true);
    expect(text).toContain(' ---> Error: inner');
    expect(text.endsWith(os.EOL)).toBe(true);
    expect(compileTemplate('{Message}')(event({ error: err }))).toBe('hello');
  });

  it('support .NET date formats, level forms, alignment, source context, properties and braces', () => {
    expect(compileTimeFormat('yyyy-MM-dd HH:mm:ss.fff')(at)).toBe('2026-01-02 03:04:05.067');
    expect(compileTimeFormat("yy/M/d h:m:s tt 'at' ff")(at)).toBe('26/1/2 3:4:5 AM at 06');
    const render = compileTemplate('{Level,-12}|{Level:w3}|{Level:u}|{SourceContext}|{Properties}|{{x}}|{RequestId}');
    expect(render(event({ label: 'http', meta: { RequestId: 'r1', n: 2 } }))).toBe(
      'Information |inf|INFORMATION|http|{ SourceContext: "http", RequestId: "r1", n: 2 }|{x}|r1',
    );
    expect(compileTemplate('{Properties:j}')(event({ label: 'a' }))).toBe('{"SourceContext":"a"}');
  });

  it('append meta to the message when the template has no {Properties}, so it is not lost', () => {
    expect(compileTemplate('{Message:lj}')(event({ meta: { err: 'boom' } }))).toBe('hello {"err":"boom"}');
  });

  it('hide passwords in messages and exceptions when given the redaction', () => {
    const render = compileTemplate('{Message}{NewLine}{Exception}', redactSecretsInText);
    const text = render(
      event({ message: 'connect Server=db;Uid=u;Pwd=hunter2;', error: new Error('login failed for Password=hunter2') }),
    );
    expect(text).not.toContain('hunter2');
    expect(text).toContain('Pwd=***;');
  });
});
