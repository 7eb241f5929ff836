import crypto from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { ProblemError, safeEqual } from '@ack/host';
import { wwwrootProblems } from '../problem-codes.js';
import type { WwwrootRuntime } from '../runtime.js';
import { createSqidsCodec, parseCount, parseFlag, queryText, sequentialIds, sha256Hex } from './helpers.js';
import { callerOrigin, createIdIssuer, parseFromMinutes } from './create-id.js';
import {
  ANTIFORGERY_FORM_FIELD,
  ANTIFORGERY_HEADER,
  ANTIFORGERY_MAX_AGE_MS,
  checkAntiforgeryToken,
  issueAntiforgeryToken,
} from './antiforgery.js';
import { buildTransactionRequest, executeTransaction, parseTransactionBody } from './transaction.js';

/**
 * `/wwwroot/api/index/*`: the screen helper APIs and the direct-transaction wrapper
 * (docs/helper-apis.md). Answers are JSON except `GET /` (the module name as text).
 */
export function createScreenHelperRouter(runtime: WwwrootRuntime): Router {
  const { ctx, settings } = runtime;
  const timeoutMs = settings.businessServerTimeoutMs;
  const sqids = createSqidsCodec(settings.host.sqidsAlphabet, ctx.settingsFile);
  const ids = createIdIssuer(settings.host.withOrigins, settings.createIdPolicy);
  const antiforgeryKey = ctx.host.keys.key('antiforgery');
  const antiforgeryCookie = `${settings.host.cookiePrefixName}.XSRF-TOKEN`;
  // The derived default key (SystemID + RunningEnvironment + HostName) is guessable, so it never
  // opens the wrapper: key access needs ModuleConfig:AuthorizationKey set explicitly.
  const keyConfigured = settings.authorizationKeyConfigured;
  const authorizationKey = Buffer.from(keyConfigured ? settings.authorizationKey : '', 'utf8');
  const log = ctx.logger;
  if (!keyConfigured)
    log.info('transaction wrapper: ModuleConfig:AuthorizationKey is not set, so only signed-in users may call it');

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
    if (text === undefined)
      throw new ProblemError({
        status: 400,
        code: wwwrootProblems.INDEX_INVALID_TEXT.code,
        detail: 'text is required (it may be empty: ?text=).',
      });
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
    const kept = ids.issue(origin, req.ack.clientIp, fromMinutes);
    res.json(kept);
  };
  router.get('/create-id', (req, res) => createId(req, res, queryText(req.query.fromMinutes, 'fromMinutes')));
  // A JSON body may carry fromMinutes; any other body is not read.
  router.post('/create-id', ctx.host.bodies.optionalJson(4 * 1024), (req, res) => {
    const fromBody =
      typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>).fromMinutes : undefined;
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
      secure: req.ack.protocol === 'https',
      path: '/',
      maxAge: ANTIFORGERY_MAX_AGE_MS,
    });
    res.json({
      token,
      headerName: ANTIFORGERY_HEADER,
      formFieldName: ANTIFORGERY_FORM_FIELD,
      expiresAt: new Date(now + ANTIFORGERY_MAX_AGE_MS).toISOString(),
    });
  });

  const validateToken = (req: Request, res: Response) => {
    const body = typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>) : {};
    const fromForm =
      typeof body[ANTIFORGERY_FORM_FIELD] === 'string' ? (body[ANTIFORGERY_FORM_FIELD] as string) : undefined;
    const submitted = req.get(ANTIFORGERY_HEADER) ?? fromForm;
    const cookies = (req.cookies ?? {}) as Record<string, string>;
    const failure = checkAntiforgeryToken(
      antiforgeryKey,
      req.ackUser?.UserID ?? '',
      cookies[antiforgeryCookie],
      submitted,
      Date.now(),
    );
    if (failure) {
      throw new ProblemError({
        status: 400,
        code: wwwrootProblems.INDEX_INVALID_ANTIFORGERY_TOKEN.code,
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
  router.post('/validate-token', ctx.host.bodies.form(8 * 1024), validateToken);

  // The direct-transaction wrapper: not an open proxy, so the caller is checked before the body is read.
  // A signed-in user's cookie authorises it, so another site's page may not use it.
  router.post(
    '/transaction',
    ctx.host.refuseCrossSite,
    (req, _res, next) => {
      if (req.ackUser) return next();
      const presented = req.get('AuthorizationKey');
      if (presented !== undefined && authorizationKey.length > 0 && safeEqual(presented, authorizationKey))
        return next();
      next(
        new ProblemError({
          status: 401,
          code: wwwrootProblems.INDEX_TRANSACTION_UNAUTHORIZED.code,
          detail: "Sign in, or present the module's key in the AuthorizationKey header.",
        }),
      );
    },
    ctx.host.bodies.json(wwwrootProblems.INDEX.prefix, 1024 * 1024),
    async (req, res) => {
      const input = parseTransactionBody(req.body);
      const body = buildTransactionRequest(input, settings.host.transaction, {
        moduleID: settings.moduleId,
        moduleVersion: settings.version,
        operatorID: req.ackUser?.UserID ?? '',
        now: new Date(),
      });
      try {
        res.json(await executeTransaction(settings.businessServerUrl, body, timeoutMs, ctx.host.traces.fetch));
      } catch (err) {
        if (err instanceof ProblemError && err.problem.status === 502) {
          log.warn(
            `transaction ${input.programID}|${input.businessID}|${input.transactionID}|${input.functionID} failed: ${err.problem.detail}`,
          );
        }
        throw err;
      }
    },
  );

  return router;
}
