const PART = '(\\d+(?:[.,]\\d+)?)';
const DURATION = new RegExp(`^P(?:${PART}W)?(?:${PART}D)?(?:T(?:${PART}H)?(?:${PART}M)?(?:${PART}S)?)?$`);

/**
 * Seconds of an ISO 8601 duration as the platform writes it (videos.list's contentDetails.duration,
 * a watch page's itemprop=duration): "PT21M7S", "P1DT2H3M4S", "PT0S", "P0D", "P1W", "PT1,5S".
 * Fractions take '.' or ','; the total is rounded to whole seconds. Years and months (no fixed
 * length), empty designators ("P", "PT") and anything else give undefined.
 */
export function parseIsoDuration(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toUpperCase();
  const match = DURATION.exec(text);
  if (!match || text === 'P' || text.endsWith('T')) return undefined;
  const [, weeks, days, hours, minutes, seconds] = match;
  const part = (field: string | undefined) => (field ? Number(field.replace(',', '.')) : 0);
  const total = part(weeks) * 604_800 + part(days) * 86_400 + part(hours) * 3_600 + part(minutes) * 60 + part(seconds);
  return Number.isFinite(total) ? Math.round(total) : undefined;
}
