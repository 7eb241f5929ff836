import crypto from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { ProblemError, SettingsError, parseTimeSpanMs, readAsDotNet, timeSpan, type AckRequest } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';
import { jsonBody } from './json-body.js';
import { createSqidsCodec, parseCount, parseFlag, queryText, sequentialIds, sha256Hex } from './helpers.js';
import { callerOrigin, createIdIssuer, parseFromMinutes } from './create-id.js';
import { ANTIFORGERY_FORM_FIELD, ANTIFORGERY_HEADER, ANTIFORGERY_MAX_AGE_MS, checkAntiforgeryToken, issueAntiforgeryToken } from './antiforgery.js';
import { buildTransactionRequest, executeTransaction, parseTransactionBody } from './transaction.js';

/** Settings of this capability in `ModuleConfig` (docs/helper-apis.md). */
const IndexApiSettingsSchema = z.looseObject({
  CreateIDPolicy: z
    .looseObject({
      IsEnabled: z.boolean().default(false),
      PermitLimit: z.number().int().positive().default(10),
      WindowSeconds: z.number().int().positive().default(60),
    })
    .prefault({}),
  BusinessServerTimeout: timeSpan.default('00:00:30'),
});

/**
 * `/wwwroot/api/index/*`: the screen helper APIs and the direct-transaction wrapper (DESIGN §5,
 * docs/helper-apis.md). Answers are JSON except `GET /` (the module name as text).
 */
export function createIndexApiRouter(runtime: WwwrootRuntime): Router {
  const { ctx, settings } = runtime;
  const app = ctx.settings.AppSettings;
  // "true" and "10" mean true and 10, as in appsettings.json.
  const parsed = IndexApiSettingsSchema.safeParse(readAsDotNet(settings.raw, IndexApiSettingsSchema));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SettingsError(`${ctx.settingsFile}: ModuleConfig:${issue.path.join(':')}: ${issue.message}`);
  }
  const own = parsed.data;
  const timeoutMs = Math.max(1, parseTimeSpanMs(own.BusinessServerTimeout));
  const sqids = createSqidsCodec(app.SqidsAlphabet, ctx.settingsFile);
  const ids = createIdIssuer(app.WithOrigins, own.CreateIDPolicy);
  const antiforgeryKey = ctx.host.keys.key('antiforgery');
  const antiforgeryCookie = `${app.CookiePrefixName}.XSRF-TOKEN`;
  // The derived default key (SystemID + RunningEnvironment + HostName) is guessable, so it never
  // opens the wrapper: key access needs ModuleConfig:AuthorizationKey set explicitly.
  const keyConfigured = typeof settings.raw.AuthorizationKey === 'string' && settings.raw.AuthorizationKey.trim() !== '';
  const authorizationKey = Buffer.from(keyConfigured ? settings.authorizationKey : '', 'utf8');
  const log = ctx.logger;
  if (!keyConfigured) log.info('transaction wrapper: ModuleConfig:AuthorizationKey is not set, so only signed-in users may call it');

  const router = express.Router();
  router.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  router.get('/', (_req, res) => {
    res.type('text/plain').send(settings.moduleId);
  });

  router.get('/id', (req, res) => {
    res.json(sequentialIds(parseCount(req.query.count), parseFlag(req.query.hasSplits, 'hasSplits')));
  });

  router.get('/guid', (_req, res) => {
    res.json(crypto.randomUUID());
  });

  router.get('/sha256hash', (req, res) => {
    const text = queryText(req.query.text, 'text');
    if (text === undefined) throw new ProblemError({ status: 400, code: 'index.invalid_text', detail: 'text is required (it may be empty: ?text=).' });
    res.json(sha256Hex(text));
  });

  router.get('/encode-no', (req, res) => {
    res.json(sqids.encode(req.query.numbers));
  });

  router.get('/decode-no', (req, res) => {
    res.json(sqids.decode(req.query.hash));
  });

  const createId = (req: Request, res: Response, fromMinutesValue: unknown) => {
    const origin = callerOrigin(req.get('origin'), req.get('referer'));
    const fromMinutes = parseFromMinutes(fromMinutesValue);
    const kept = ids.issue(origin, (req as unknown as AckRequest).ack.clientIp, fromMinutes);
    res.json(kept);
  };
  router.get('/create-id', (req, res) => createId(req, res, queryText(req.query.fromMinutes, 'fromMinutes')));
  router.post('/create-id', (req, res, next) => {
    // A JSON body may carry fromMinutes; any other body is not read.
    if (req.is('application/json')) return express.json({ limit: '4kb' })(req, res, next);
    next();
  }, (req, res) => {
    const fromBody = typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>).fromMinutes : undefined;
    createId(req, res, fromBody ?? queryText(req.query.fromMinutes, 'fromMinutes'));
  });
  router.get('/check-id', (req, res) => {
    const requestID = queryText(req.query.requestID, 'requestID') ?? '';
    const expiresAt = requestID === '' ? undefined : ids.check(requestID);
    res.json(expiresAt ? { requestID, valid: true, expiresAt } : { requestID, valid: false });
  });

  router.get('/get-anti-forgery-token', (req, res) => {
    const now = Date.now();
    const token = issueAntiforgeryToken(antiforgeryKey, req.ackUser?.UserID ?? '', now);
    res.cookie(antiforgeryCookie, token, {
      httpOnly: true,
      sameSite: 'strict',
      secure: (req as unknown as AckRequest).ack.protocol === 'https',
      path: '/',
      maxAge: ANTIFORGERY_MAX_AGE_MS,
    });
    res.json({ token, headerName: ANTIFORGERY_HEADER, formFieldName: ANTIFORGERY_FORM_FIELD, expiresAt: new Date(now + ANTIFORGERY_MAX_AGE_MS).toISOString() });
  });

  const validateToken = (req: Request, res: Response) => {
    const body = typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>) : {};
    const fromForm = typeof body[ANTIFORGERY_FORM_FIELD] === 'string' ? (body[ANTIFORGERY_FORM_FIELD] as string) : undefined;
    const submitted = req.get(ANTIFORGERY_HEADER) ?? fromForm;
    const cookies = (req.cookies ?? {}) as Record<string, string>;
    const failure = checkAntiforgeryToken(antiforgeryKey, req.ackUser?.UserID ?? '', cookies[antiforgeryCookie], submitted, Date.now());
    if (failure) {
      throw new ProblemError({
        status: 400,
        code: 'index.invalid_antiforgery_token',
        detail: {
          missing_cookie: `The ${antiforgeryCookie} cookie is missing: call get-anti-forgery-token first.`,
          missing_token: `Send the token in the ${ANTIFORGERY_HEADER} header or the ${ANTIFORGERY_FORM_FIELD} form field.`,
          mismatch: 'The token sent does not match the cookie.',
          bad_signature: 'The token was not issued by this host for this user.',
          expired: 'The token has expired: get a new one.',
        }[failure],
        extensions: { reason: failure },
      });
    }
    res.json({ valid: true });
  };
  router.get('/validate-token', validateToken);
  router.post('/validate-token', express.urlencoded({ extended: false, limit: '8kb' }), validateToken);

  // The direct-transaction wrapper: not an open proxy, so the caller is checked before the body is read.
  router.post('/transaction', (req, _res, next) => {
    if (req.ackUser) return next();
    const presented = req.get('AuthorizationKey');
    if (presented !== undefined && authorizationKey.length > 0 && constantTimeEqual(Buffer.from(presented, 'utf8'), authorizationKey)) return next();
    next(new ProblemError({
      status: 401,
      code: 'index.transaction_unauthorized',
      detail: 'Sign in, or present the module\'s key in the AuthorizationKey header.',
    }));
  }, ...jsonBody('index', '1mb'), async (req, res) => {
    const input = parseTransactionBody(req.body);
    const body = buildTransactionRequest(input, app, {
      moduleID: settings.moduleId,
      moduleVersion: settings.version,
      operatorID: req.ackUser?.UserID ?? '',
      now: new Date(),
    });
    try {
      res.json(await executeTransaction(settings.businessServerUrl, body, timeoutMs));
    } catch (err) {
      if (err instanceof ProblemError && err.problem.status === 502) {
        log.warn(`transaction ${input.programID}|${input.businessID}|${input.transactionID}|${input.functionID} failed: ${err.problem.detail}`);
      }
      throw err;
    }
  });

  return router;
}

function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  // Compare digests so that neither the length nor the content leaks through timing.
  const da = crypto.createHash('sha256').update(a).digest();
  const db = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(da, db) && a.length === b.length;
}
