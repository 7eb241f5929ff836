import crypto from 'node:crypto';
import os from 'node:os';
import { ProblemError, type HostTraces } from '@ack/host';
import { redactText, type AppSettings } from '@ack/host/settings';
import { wwwrootProblems } from '../problem-codes.js';

/**
 * The direct-transaction wrapper's core (docs/helper-apis.md, docs/wire-formats.md): the request body the original's
 * transaction client sends to `BusinessServerUrl`, and the reading of its answer into
 * `{ FormData0: ..., GridData0: [...] }`. Failures become 502 problems carrying the upstream's
 * message, redacted: never the configured URL, its credentials, or a password in the upstream's text
 * (docs/helper-apis.md).
 */

export interface TransactionInput {
  programID: string;
  businessID: string;
  transactionID: string;
  functionID: string;
  inputs: Array<Record<string, unknown>>;
}

const ID_PART = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_INPUT_SETS = 100;
const MAX_FIELDS = 500;

export function parseTransactionBody(body: unknown): TransactionInput {
  const fail = (detail: string) =>
    new ProblemError({ status: 400, code: wwwrootProblems.INDEX_INVALID_TRANSACTION.code, detail });
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw fail('The body must be a JSON object { "commandID": "...", "inputs": [...] }.');
  const { commandID, inputs } = body as Record<string, unknown>;
  const parts = typeof commandID === 'string' ? commandID.split('|') : [];
  if (parts.length !== 4 || !parts.every((p) => ID_PART.test(p))) {
    throw fail(
      'commandID must be "<ProgramID>|<BusinessID>|<TransactionID>|<FunctionID>", each part letters, digits, _, . or -.',
    );
  }
  const sets = inputs === undefined || inputs === null ? [] : inputs;
  if (!Array.isArray(sets) || sets.length > MAX_INPUT_SETS)
    throw fail(`inputs must be an array of at most ${MAX_INPUT_SETS} objects.`);
  for (const [i, set] of sets.entries()) {
    if (typeof set !== 'object' || set === null || Array.isArray(set))
      throw fail(`inputs[${i}] must be an object of field names and values.`);
    const values = Object.values(set as Record<string, unknown>);
    if (values.length > MAX_FIELDS) throw fail(`inputs[${i}] has more than ${MAX_FIELDS} fields.`);
    if (values.some((v) => v !== null && typeof v === 'object'))
      throw fail(`inputs[${i}] values must be text, numbers, booleans or null.`);
  }
  const [programID, businessID, transactionID, functionID] = parts as [string, string, string, string];
  return { programID, businessID, transactionID, functionID, inputs: sets as Array<Record<string, unknown>> };
}

const platformName = () =>
  (({ win32: 'Windows', darwin: 'OSX', linux: 'Linux', freebsd: 'FreeBSD' }) as Record<string, string>)[
    process.platform
  ] ?? process.platform;

/** The first non-internal IPv4 address and its MAC, as the original reports its source. */
function sourceAddress(): { ip: string; mac: string } {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? [])
      if (a.family === 'IPv4' && !a.internal) return { ip: a.address, mac: a.mac.replace(/:/g, '').toUpperCase() };
  }
  return { ip: '127.0.0.1', mac: '' };
}

function stamp(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

export interface RequestContextInfo {
  moduleID: string;
  moduleVersion: string;
  operatorID: string;
  now: Date;
}

/** The camelCase request body the original's transaction client sends (docs/wire-formats.md). */
/** The host's settings a transaction request names (read once, in the module's settings). */
export type TransactionHostSettings = Pick<AppSettings, 'HostName' | 'ProgramName' | 'RunningEnvironment' | 'SystemID'>;

export function buildTransactionRequest(
  input: TransactionInput,
  app: TransactionHostSettings,
  info: RequestContextInfo,
): Record<string, unknown> {
  const env = app.RunningEnvironment;
  const requestID = `${input.programID}${input.businessID}${input.transactionID}${input.functionID}${env}${stamp(info.now)}${crypto.randomBytes(3).toString('hex').toUpperCase()}`;
  const source = sourceAddress();
  const dataMapSet = input.inputs.map((set) => Object.entries(set).map(([id, value]) => ({ id, value })));
  return {
    acceptDateTime: null,
    accessToken: '',
    action: 'SYN',
    kind: 'BIZ',
    clientTag: `${app.SystemID}|${app.HostName}|${app.ProgramName}|${env}`,
    loadOptions: { encryptionType: 'P', encryptionKey: 'G', platform: platformName() },
    requestID,
    version: '001',
    environment: env,
    system: {
      programID: input.programID,
      moduleID: info.moduleID,
      version: info.moduleVersion,
      routes: [
        {
          systemID: app.SystemID,
          hostName: '',
          environment: '',
          requestTick: info.now.getTime(),
          acceptTick: 0,
          responseTick: 0,
        },
      ],
      localeID: 'ko',
      hostName: app.HostName,
      pathName: '',
      deviceID: '',
    },
    interface: {
      devicePlatform: platformName(),
      interfaceID: 'S',
      sourceIP: source.ip,
      sourcePort: 0,
      sourceMAC: source.mac,
      connectionType: '006',
      timeout: 0,
    },
    transaction: {
      globalID: requestID,
      businessID: input.businessID,
      transactionID: input.transactionID,
      functionID: input.functionID,
      commandType: '',
      simulationType: 'N',
      terminalGroupID: '',
      operatorID: info.operatorID,
      screenID: input.transactionID,
      startTraceID: 'ModuleApiClient',
      dataFormat: 'J',
      compressionYN: 'N',
      transactionToken: '',
    },
    payLoad: {
      property: {},
      dataMapInterface: '',
      dataMapCount: dataMapSet.map(() => 1),
      dataMapSet,
      dataMapSetRaw: [],
    },
  };
}

const MAX_UPSTREAM_BYTES = 32 * 1024 * 1024;

/**
 * Posts the request and reads the answer; every failure is a 502 problem with the upstream's words,
 * redacted. `send` is the host's traced fetch (`ctx.host.traces.fetch`), so the business server
 * gets the request's `traceparent` (docs/operations.md "Traces").
 */
export async function executeTransaction(
  url: string,
  body: Record<string, unknown>,
  timeoutMs: number,
  send: HostTraces['fetch'],
): Promise<Record<string, unknown>> {
  const upstreamFailure = (detail: string) =>
    new ProblemError({
      status: 502,
      code: wwwrootProblems.INDEX_TRANSACTION_FAILED.code,
      detail: redactText(detail, { BusinessServerUrl: url }),
    });
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw upstreamFailure('BusinessServerUrl is not a valid URL.');
  }
  if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:')
    throw upstreamFailure('BusinessServerUrl must be an http or https URL.');
  // Credentials in the URL are sent as Basic authorization (fetch refuses a URL that holds them).
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'cache-control': 'no-cache',
    ClientTag: '',
  };
  if (parsedUrl.username !== '' || parsedUrl.password !== '') {
    const user = decodeURIComponent(parsedUrl.username);
    const password = decodeURIComponent(parsedUrl.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
    parsedUrl.username = '';
    parsedUrl.password = '';
  }
  const signal = AbortSignal.timeout(timeoutMs);
  let text: string;
  let status: number;
  try {
    const res = await send(parsedUrl, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      redirect: 'manual',
      signal,
    });
    status = res.status;
    text = await readCapped(res);
  } catch (err) {
    if (signal.aborted) throw upstreamFailure(`The business server did not answer within ${timeoutMs} ms.`);
    const cause = (err as { cause?: unknown }).cause;
    const why = cause instanceof Error ? ` (${cause.message})` : '';
    throw upstreamFailure(`The business server could not be reached: ${(err as Error).message}${why}`);
  }

  let answer: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      answer = parsed as Record<string, unknown>;
  } catch {
    answer = undefined;
  }
  if (status < 200 || status >= 300) {
    const message = answer ? upstreamMessage(answer) : text.slice(0, 500).trim();
    throw upstreamFailure(`The business server answered HTTP ${status}${message ? `: ${message}` : '.'}`);
  }
  if (!answer) throw upstreamFailure('The business server did not answer with a JSON object.');
  if (answer.acknowledge !== 1) {
    throw upstreamFailure(`The transaction failed: ${upstreamMessage(answer) || 'acknowledge was not 1.'}`);
  }
  const result = answer.result as { dataSet?: unknown } | undefined;
  const dataSet = Array.isArray(result?.dataSet) ? result.dataSet : [];
  const out: Record<string, unknown> = {};
  for (const item of dataSet) {
    if (typeof item !== 'object' || item === null) continue;
    const { id, value } = item as { id?: unknown; value?: unknown };
    if (typeof id !== 'string') continue;
    if (id === 'HasException') {
      const error = (value as { ErrorMessage?: unknown } | null)?.ErrorMessage;
      throw upstreamFailure(`The transaction failed: ${typeof error === 'string' ? error : JSON.stringify(value)}`);
    }
    out[id] = value ?? '';
  }
  return out;
}

/** The upstream's own words: `exceptionText`, else `message.mainText`. */
function upstreamMessage(answer: Record<string, unknown>): string {
  if (typeof answer.exceptionText === 'string' && answer.exceptionText.trim() !== '')
    return answer.exceptionText.trim();
  const message = answer.message as { mainText?: unknown } | undefined;
  if (typeof message?.mainText === 'string' && message.mainText.trim() !== '') return message.mainText.trim();
  return '';
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      total += read.value.byteLength;
      if (total > MAX_UPSTREAM_BYTES) throw new Error(`the answer is over ${MAX_UPSTREAM_BYTES} bytes`);
      chunks.push(read.value);
    }
  } finally {
    // Stops the upstream body on an answer over the limit (and is harmless once it has ended).
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8');
}
