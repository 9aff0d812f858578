/** decodeURIComponent that keeps a malformed escape ("%E0%A4%A") as written instead of throwing. */
export function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
