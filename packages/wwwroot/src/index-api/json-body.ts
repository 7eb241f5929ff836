import express, { type RequestHandler } from 'express';
import { ProblemError } from '@ack/host';

/**
 * A JSON request body for the wwwroot APIs: `Content-Type: application/json` (else 415), parsed
 * strictly within `limit`. A body that is not valid JSON is a 400 and one over the limit a 413,
 * both answered as problems by the host's error responder (body-parser sets their status).
 */
export function jsonBody(code: string, limit = '64kb'): RequestHandler[] {
  const parse = express.json({ limit, strict: true });
  return [
    (req, _res, next) => {
      if (!req.is('application/json')) {
        return next(new ProblemError({
          status: 415,
          code: `${code}.unsupported_media_type`,
          detail: 'Send the body as Content-Type: application/json.',
        }));
      }
      next();
    },
    parse,
  ];
}
