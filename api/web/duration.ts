/** A wait in words a person reads at a glance: "42 s", "12 min", "4 h 23 min", "2 d 3 h". */
export function durationInWords(seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds));
  if (whole < 60) return `${whole} s`;
  const minutes = Math.ceil(whole / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return hours % 24 ? `${Math.floor(hours / 24)} d ${hours % 24} h` : `${Math.floor(hours / 24)} d`;
}

/** The UTC clock time `seconds` from now: "00:00 UTC". */
const clockTimeAfter = (seconds: number, now = Date.now()) =>
  `${new Date(now + Math.max(0, seconds) * 1000).toISOString().slice(11, 16)} UTC`;

/** When a limit resets or a retry is allowed: "in 4 h 23 min, at 03:10 UTC"; under a minute, "in 42 s". */
export const whenInWords = (seconds: number) =>
  seconds < 60 ? `in ${durationInWords(seconds)}` : `in ${durationInWords(seconds)}, at ${clockTimeAfter(seconds)}`;
