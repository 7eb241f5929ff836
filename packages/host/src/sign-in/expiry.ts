/**
 * Sign-in expiry from `UserSignExpire` (docs/dev-sign-in.md "Expiry"): above 0, that many minutes
 * from now; below 0, hour |N| (local time) of the next day; 0, one day from now. An hour above 23
 * cannot be a clock hour, so it falls back to one day, as the original's parse failure does.
 */
export function computeSignExpiry(userSignExpire: number, now: Date): Date {
  if (userSignExpire > 0) return new Date(now.getTime() + userSignExpire * 60_000);
  const oneDay = new Date(now);
  oneDay.setDate(oneDay.getDate() + 1);
  if (userSignExpire === 0 || -userSignExpire > 23) return oneDay;
  const tomorrowAtHour = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1, -userSignExpire, 0, 0, 0);
  return tomorrowAtHour;
}
