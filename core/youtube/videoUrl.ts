/** The video id a watch, shorts, embed, live or youtu.be URL names (case kept), if any. */
export function videoIdOfUrl(url: string): string | undefined {
  const query = /[?&]v=([A-Za-z0-9_-]{11})(?![A-Za-z0-9_-])/.exec(url);
  if (query && /\/watch\b/i.test(url)) return query[1];
  const path = /(?:youtu\.be\/|\/(?:shorts|embed|live|v|e)\/)([A-Za-z0-9_-]{11})(?![A-Za-z0-9_-])/i.exec(url);
  return path?.[1];
}
