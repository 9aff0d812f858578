/** Splits a subtitle file into lines: drops a leading BOM and accepts CRLF, LF or lone CR endings. */
export function splitLines(text: string): string[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return (body.includes('\r') ? body.replace(/\r\n?/g, '\n') : body).split('\n');
}
