import express, { type Request, type Response, type Router } from 'express';
import { ProblemError } from '@ack/host';
import { safeLocalReturnUrl } from '@ack/host/serving';
import { wwwrootProblems } from '../problem-codes.js';
import type { WwwrootRuntime } from '../runtime.js';
import { checkDevAccount, type FieldError } from './account.js';

/**
 * `/wwwroot/api/dev-account/sign-in` (docs/dev-sign-in.md). Exists only when
 * `AppSettings:IsEnabledDevAutoSignIn` is true and `RunningEnvironment` is `D`: otherwise the
 * router is empty and the path is an ordinary 404, indistinguishable from no route at all.
 */
export function createDevSignInRouter(runtime: WwwrootRuntime): Router {
  const router = express.Router();
  if (!runtime.settings.host.devSignIn) return router;

  const signIn = runtime.ctx.host.signIn;
  const settingsFile = runtime.ctx.settingsFile;
  const returnTo = (req: Request) => safeLocalReturnUrl(req.query.returnUrl);
  // Sign-in and sign-out change who the browser is: never on another site's behalf.
  router.use(runtime.ctx.host.refuseCrossSite);

  // Already signed in (a valid authentication cookie), whatever the request holds: go back.
  // Runs before any body parsing, so even an invalid body redirects.
  const alreadySignedIn = (req: Request, res: Response, next: () => void) => {
    if (req.ackUser) return res.redirect(302, returnTo(req));
    next();
  };

  router.get('/sign-in', alreadySignedIn, async (req, res) => {
    const check = checkDevAccount(runtime.settings.devAutoSignIn);
    if (!check.ok) {
      const missingId = check.errors.some((e) => e.field === 'UserID');
      throw new ProblemError({
        status: 400,
        code: missingId
          ? wwwrootProblems.DEV_SIGN_IN_NO_CONFIGURED_USER.code
          : wwwrootProblems.DEV_SIGN_IN_INVALID_CONFIGURED_ACCOUNT.code,
        detail: missingId
          ? `No development account is configured: set ModuleConfig:DevAutoSignIn:UserID in ${settingsFile}.`
          : `The development account in ${settingsFile} is not valid: ${describe(check.errors, 'ModuleConfig:DevAutoSignIn:')}.`,
        extensions: { errors: check.errors.map((e) => ({ ...e, field: `ModuleConfig:DevAutoSignIn:${e.field}` })) },
      });
    }
    await signIn.issue(req, res, check.account, 'dev sign-in GET');
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, returnTo(req));
  });

  router.post(
    '/sign-in',
    alreadySignedIn,
    runtime.ctx.host.bodies.json(wwwrootProblems.DEV_SIGN_IN.prefix),
    async (req, res) => {
      const check = checkDevAccount(req.body);
      if (!check.ok) {
        throw new ProblemError({
          status: 400,
          code: wwwrootProblems.DEV_SIGN_IN_INVALID_ACCOUNT.code,
          detail: `The account is not valid: ${describe(check.errors)}.`,
          extensions: { errors: check.errors },
        });
      }
      const user = await signIn.issue(req, res, check.account, 'dev sign-in POST');
      res.setHeader('Cache-Control', 'no-store');
      if (wantsJson(req)) return res.status(200).json(user);
      res.redirect(302, returnTo(req));
    },
  );

  // Sign-out, so that a developer can switch accounts (the sign-in redirects while signed in).
  // POST only: a link or image on another site cannot sign the user out.
  router.post('/sign-out', async (req, res) => {
    await signIn.clear(req, res);
    res.setHeader('Cache-Control', 'no-store');
    if (wantsJson(req)) return res.status(204).end();
    res.redirect(302, returnTo(req));
  });

  runtime.ctx.logger.warn(
    'development sign-in is enabled: /wwwroot/api/dev-account/sign-in signs anyone in (RunningEnvironment D only)',
  );
  return router;
}

function describe(errors: FieldError[], prefix = ''): string {
  return errors.map((e) => `${prefix}${e.field} ${e.message}`).join('; ');
}

/** `Accept: application/json` preferred over HTML: the caller is a script, not a browser page. */
function wantsJson(req: Request): boolean {
  const accept = req.headers.accept ?? '';
  return accept !== '' && req.accepts(['html', 'json']) === 'json' && /json/i.test(accept);
}
