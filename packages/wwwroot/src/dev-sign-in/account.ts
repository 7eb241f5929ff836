import { PROFILE_FIELDS, type SignInAccount } from '@ack/host/serving';

/**
 * Validation of a development account (docs/wire-formats.md "Development account"): `UserID` a non-empty string,
 * `Roles` an array of strings, `BirthDate` a real `YYYY-MM-DD` date, `Gender` one letter, every
 * other listed field a string. An empty string (or null) means "not set". Lengths are bounded so
 * that the account fits in a cookie. Fields not in that list are ignored.
 */
export interface FieldError {
  field: string;
  message: string;
}

export type AccountCheck = { ok: true; account: SignInAccount } | { ok: false; errors: FieldError[] };

const MAX_TEXT = 256;
const MAX_ROLES = 32;
const MAX_ROLE = 64;

export function checkDevAccount(input: unknown): AccountCheck {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, errors: [{ field: '(body)', message: 'must be a JSON object' }] };
  }
  const o = input as Record<string, unknown>;
  const errors: FieldError[] = [];
  const account: SignInAccount = { UserID: '' };

  if (typeof o.UserID !== 'string' || o.UserID.trim() === '') {
    errors.push({ field: 'UserID', message: 'is required: a non-empty string' });
  } else if (o.UserID.length > MAX_TEXT || /[\u0000-\u001f\u007f]/.test(o.UserID)) {
    errors.push({ field: 'UserID', message: `must be at most ${MAX_TEXT} characters without control characters` });
  } else {
    account.UserID = o.UserID;
  }

  for (const field of PROFILE_FIELDS) {
    const value = o[field];
    if (value === undefined || value === null || value === '') continue;
    if (typeof value !== 'string') {
      errors.push({ field, message: 'must be a string' });
    } else if (value.length > MAX_TEXT) {
      errors.push({ field, message: `must be at most ${MAX_TEXT} characters` });
    } else if (field === 'BirthDate' && !isRealDate(value)) {
      errors.push({ field, message: 'must be a real date written YYYY-MM-DD' });
    } else if (field === 'Gender' && !/^\p{L}$/u.test(value)) {
      errors.push({ field, message: 'must be a single letter' });
    } else {
      account[field] = value;
    }
  }

  const roles = o.Roles;
  if (roles !== undefined && roles !== null) {
    if (!Array.isArray(roles) || !roles.every((r) => typeof r === 'string')) {
      errors.push({ field: 'Roles', message: 'must be an array of strings' });
    } else if (roles.length > MAX_ROLES || roles.some((r: string) => r.length > MAX_ROLE || r.includes(','))) {
      errors.push({
        field: 'Roles',
        message: `must hold at most ${MAX_ROLES} roles of at most ${MAX_ROLE} characters, without commas`,
      });
    } else {
      account.Roles = (roles as string[]).filter((r) => r !== '');
    }
  }

  return errors.length > 0 ? { ok: false, errors } : { ok: true, account };
}

/** `YYYY-MM-DD` naming a day that exists (no 2023-02-30). */
export function isRealDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}
