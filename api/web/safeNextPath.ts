/** Any origin of ours would do: only whether parsing `next` against it keeps it matters. */
const HERE = 'https://afterimage.invalid';

/** C0 controls, DEL and C1 controls: the URL parser drops tabs and newlines silently (`/\t/evil.example` is `//evil.example`). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Where to send a visitor after a form (`next`): a path of this site, as the WHATWG URL parser (the
 * browser's) reads it, else `fallback`. Refused: another origin however spelt (`//evil`, `/\evil`,
 * `https://evil`), a path that serialises as one (`/.//evil` is `//evil`), and control characters. The
 * answer is the parsed URL's serialisation, percent-encoded ASCII, so a Location header can always hold it.
 */
export function safeNextPath(next: string | undefined, fallback = '/'): string {
  if (!next?.startsWith('/') || CONTROL.test(next)) return fallback;
  let url: URL;
  try {
    url = new URL(next, HERE);
  } catch {
    return fallback;
  }
  const path = `${url.pathname}${url.search}${url.hash}`;
  return url.origin === HERE && !path.startsWith('//') ? path : fallback;
}
