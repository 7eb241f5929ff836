/** Milliseconds of a .NET TimeSpan text (`[d.]hh:mm:ss[.fff]`), as validated by the schema. */
export function parseTimeSpanMs(text: string): number {
  const m = /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d+))?$/.exec(text);
  if (!m) throw new Error(`not a time span: ${text}`);
  const [, d = '0', h, min, s, frac = '0'] = m;
  return (
    ((Number(d) * 24 + Number(h)) * 3600 + Number(min) * 60 + Number(s)) * 1000 + Math.round(Number(`0.${frac}`) * 1000)
  );
}
