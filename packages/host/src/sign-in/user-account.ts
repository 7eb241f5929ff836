/** The optional text fields of an account (docs/wire-formats.md), in the original entity's order. */
export const PROFILE_FIELDS = [
  'UserNo',
  'UserName',
  'Email',
  'Celluar',
  'PositionName',
  'DepartmentName',
  'CompanyName',
  'BirthDate',
  'Gender',
  'Address',
  'ExtendOption',
] as const;

/** The optional profile fields (`Celluar` spelled as the original's entity spells it). */
export type UserProfile = Partial<Record<(typeof PROFILE_FIELDS)[number], string>>;

/**
 * The signed-in user, shaped as the original host's `UserAccount` (docs/dev-sign-in.md, PascalCase
 * names) so that screens reading `{P}.Member` keep working. Optional profile fields are omitted
 * when not set, as the original omits nulls.
 */
export interface UserAccount extends UserProfile {
  UserAccountID?: string;
  ApplicationID: string;
  UserID: string;
  SessionKey: string;
  ApplicationRoleID: string;
  Roles: string[];
  Claims: Record<string, string>;
  /** ISO 8601 time of sign-in. */
  LoginedAt: string;
}

/** What a sign-in starts from: the account fields (docs/wire-formats.md "Development account"; `UserID` required). */
export interface SignInAccount extends UserProfile {
  UserID: string;
  Roles?: string[];
  Claims?: Record<string, string>;
}

export function toUserAccount(input: SignInAccount, applicationID: string, now: Date): UserAccount {
  const account: UserAccount = {
    ApplicationID: applicationID,
    UserID: input.UserID,
    SessionKey: '',
    ApplicationRoleID: '',
    Roles: [...(input.Roles ?? [])],
    Claims: { ...(input.Claims ?? {}) },
    LoginedAt: now.toISOString(),
  };
  for (const field of PROFILE_FIELDS) {
    const value = input[field];
    // An empty string means "not set", as the original treats it.
    if (typeof value === 'string' && value !== '') account[field] = value;
  }
  return account;
}
