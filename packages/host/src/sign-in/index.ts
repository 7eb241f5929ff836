import crypto from 'node:crypto';
import type { CookieOptions, Request, RequestHandler, Response } from 'express';
import type { HostSettings } from '../settings/schema.js';
import type { Keyring } from '../keys/keyring.js';
import type { Logger } from '../logging/logger.js';
import { ProblemError } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import { createAuthTicketReader, signAuthTicket } from './auth-cookie.js';
import { cookieValue } from '../keys/cookie-value.js';
import { createRevocationList, type RevocationList } from './revocations.js';
import { computeSignExpiry } from './expiry.js';
import { PROFILE_FIELDS, toUserAccount, type SignInAccount, type UserAccount } from './user-account.js';

export { computeSignExpiry } from './expiry.js';
export { safeLocalReturnUrl } from './return-url.js';
export {
  createRevocationList,
  REVOKED_KEY_PREFIX,
  type RevocationList,
  type RevocationOptions,
} from './revocations.js';
export type { SignInAccount, UserAccount } from './user-account.js';

/** Cookie names of the sign-in set (docs/dev-sign-in.md), `{P}` = `CookiePrefixName`. */
export interface SignInCookieNames {
  tokenId: string;
  expireTicks: string;
  member: string;
  variable: string;
  bearerToken: string;
  /** The only one the server trusts: HttpOnly and HMAC-signed. */
  authentication: string;
}

/**
 * Sign-in cookies as the original's `checkup` module writes them, kept in the host so that every
 * sign-in (dev sign-in today, a sign-in module later) issues the same set.
 */
export interface SignInService {
  readonly cookieNames: SignInCookieNames;
  /**
   * Signs `account` in: with sessions on, gives the request a new session (a session id planted
   * before sign-in is not the one after it) holding the member under `{P}.Member`; writes the
   * cookie set on `res` and logs the user ID and client address (never a cookie value). `via`
   * names the caller in the log (e.g. `dev-sign-in GET`). Rejects with a 400 `ProblemError`
   * when the account is too large for a cookie (nothing written then).
   */
  issue(req: Request, res: Response, account: SignInAccount, via?: string): Promise<UserAccount>;
  /**
   * Signs out: the authentication cookie presented is refused from now until its expiry, the
   * session is destroyed, and the cookie set is cleared (by exact name: unrelated cookies sharing
   * the prefix are left alone).
   */
  clear(req: Request, res: Response): Promise<void>;
  /**
   * The user the request's authentication cookie proves, if it is valid, not expired and not
   * signed out (the sign-in phase has already put it on `req.ackUser`).
   */
  read(req: Request): Promise<UserAccount | undefined>;
}

/** Browsers drop cookies over 4096 bytes (name, value and attributes); stay clear of it. */
const MAX_COOKIE_VALUE_BYTES = 3800;

export function createSignInService(
  settings: HostSettings,
  keys: Keyring,
  logger: Logger,
  revocations: RevocationList = createRevocationList(),
): SignInService {
  const app = settings.AppSettings;
  const p = app.CookiePrefixName;
  const names: SignInCookieNames = {
    tokenId: `${p}.TokenID`,
    expireTicks: `${p}.ExpireTicks`,
    member: `${p}.Member`,
    variable: `${p}.Variable`,
    bearerToken: `${p}.BearerToken`,
    authentication: `${p}.AuthenticationScheme`,
  };
  const authKey = keys.key('auth-cookie');
  const bearerKey = keys.key('bearer-token');
  const base64Json = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64');

  const shown = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  // Verified with the current key and any previous ones still valid (rotation, docs/sessions.md).
  const readTicket = createAuthTicketReader(() => keys.keys('auth-cookie'));
  const ticketOf = (req: Request) => readTicket(cookieValue(req.headers.cookie, names.authentication), Date.now());
  return {
    cookieNames: names,
    async issue(req, res, input, via = 'sign-in') {
      if (!revocations.acceptsSignIns()) {
        // Every sign-out is kept until its cookie expires: the bound on them falls on new sign-ins.
        throw new ProblemError({
          status: 503,
          code: hostProblems.SIGN_IN_SIGN_OUTS_FULL.code,
          detail: 'Too many signed-out cookies are still live on this host; sign in again later.',
        });
      }
      const now = new Date();
      const expires = computeSignExpiry(app.UserSignExpire, now);
      const clientIp = req.ack?.clientIp ?? '';
      const user = toUserAccount(input, app.ApplicationID, now);
      const guid = crypto.randomUUID().replace(/-/g, '');
      const variable: Record<string, unknown> = { ClientIP: clientIp, InstallType: app.InstallType };
      for (const field of PROFILE_FIELDS) {
        if (field !== 'UserNo' && field !== 'UserName' && field !== 'Email' && user[field] !== undefined)
          variable[field] = user[field];
      }
      const bearerPayload = Buffer.from(
        JSON.stringify({
          TokenID: guid,
          IssuerName: app.SystemID,
          ClientIP: clientIp,
          CreatedAt: now.toISOString(),
          ExpiredAt: app.UserSignExpire === 0 ? null : expires.toISOString(),
          Policy: {
            UserNo: user.UserNo ?? '',
            UserID: user.UserID,
            UserName: user.UserName ?? '',
            Email: user.Email ?? '',
            Roles: user.Roles,
            Claims: user.Claims,
          },
        }),
        'utf8',
      ).toString('base64url');
      const bearerMac = crypto.createHmac('sha256', bearerKey).update(bearerPayload).digest('base64url');
      const authTicket = (sid: string | undefined) =>
        signAuthTicket({ tid: guid, exp: expires.getTime(), user, ...(sid === undefined ? {} : { sid }) }, authKey);

      const values: Array<[string, string, boolean]> = [
        [
          names.tokenId,
          `${app.RunningEnvironment}|${app.HostName}|${app.SystemID}|${app.ApplicationID}|${guid}`,
          false,
        ],
        [names.expireTicks, String(expires.getTime()), false],
        [names.member, base64Json(user), false],
        [names.variable, base64Json(variable), false],
        [
          names.bearerToken,
          `${Buffer.from(user.UserID, 'utf8').toString('base64')}.${bearerPayload}.${bearerMac}`,
          false,
        ],
        // Sized here with the session id of the request (the new one has the same length), signed
        // again below with the new one, so that nothing is changed when the account is too large.
        [names.authentication, authTicket(req.session ? req.sessionID : undefined), true],
      ];
      // All or nothing: check every value before writing any cookie.
      for (const [name, value] of values) {
        if (Buffer.byteLength(encodeURIComponent(value)) > MAX_COOKIE_VALUE_BYTES) {
          throw new ProblemError({
            status: 400,
            code: hostProblems.SIGN_IN_ACCOUNT_TOO_LARGE.code,
            detail: `The account is too large for the ${name} cookie; shorten its fields.`,
          });
        }
      }
      if (req.session) {
        // A new session id on sign-in: one planted by another party before it is worth nothing after.
        const session = req.session;
        await new Promise<void>((resolve, reject) =>
          session.regenerate((err?: unknown) => (err ? reject(err) : resolve())),
        );
        Object.assign(req.session, { [names.member]: user });
        values[values.length - 1]![1] = authTicket(req.sessionID);
      }
      const secure = req.ack?.protocol === 'https';
      for (const [name, value, httpOnly] of values) {
        const options: CookieOptions = { expires, httpOnly, sameSite: 'lax', secure, path: '/' };
        res.cookie(name, value, options);
      }
      req.ackUser = user;
      // Control characters are masked so that a user ID cannot forge log lines.
      logger.info(`signed in: user ${shown(user.UserID)} from ${clientIp || 'unknown address'} (${shown(via)})`);
      return user;
    },
    async clear(req, res) {
      const ticket = ticketOf(req);
      // The sign-out is recorded first, then the sign-in's session is destroyed (the one this
      // request holds may be another, or none): a request that finds that session may skip the
      // sign-out read (read below).
      if (ticket) await revocations.revoke(ticket.tid, ticket.exp, ticket.sid);
      const secure = req.ack?.protocol === 'https';
      if (req.session) {
        const session = req.session;
        await new Promise<void>((resolve, reject) =>
          session.destroy((err?: unknown) => (err ? reject(err) : resolve())),
        );
        const name = app.SessionState.SessionCookieName;
        if (cookieValue(req.headers.cookie, name) !== undefined)
          res.clearCookie(name, { path: '/', sameSite: 'lax', secure, httpOnly: true });
      }
      for (const name of Object.values(names)) res.clearCookie(name, { path: '/', sameSite: 'lax', secure });
      req.ackUser = undefined;
      if (ticket) logger.info(`signed out: user ${shown(ticket.user.UserID)}`);
    },
    async read(req) {
      const ticket = ticketOf(req);
      if (!ticket) return undefined;
      // The session this sign-in started, read from the store just now, still holding its member.
      const member = req.session
        ? (Reflect.get(req.session, names.member) as Partial<UserAccount> | undefined)
        : undefined;
      const sessionHoldsIt =
        ticket.sid !== undefined && req.sessionID === ticket.sid && member?.UserID === ticket.user.UserID;
      if (await revocations.isRevoked(ticket.tid, sessionHoldsIt)) return undefined;
      return ticket.user;
    },
  };
}

/**
 * Phase 3b: sign-in cookie authentication. Verifies the signed authentication cookie and puts the
 * user it proves on `req.ackUser` for every module; a missing, tampered, foreign-key, expired or
 * signed-out cookie leaves the request anonymous. `{P}.Member` and the other readable cookies are ignored.
 */
export function createSignInPhase(service: SignInService): RequestHandler {
  return (req, _res, next) => {
    service.read(req).then((user) => {
      if (user) req.ackUser = user;
      next();
    }, next);
  };
}
