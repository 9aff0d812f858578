/**
 * CDX answers of the Wayback Machine (plain text and JSON, with resume keys) as rows. No network
 * here; ./cdxQuery.ts asks the index.
 */

/** The CDX fields the Wayback serves, in its default order. */
export const CDX_FIELDS = ['urlkey', 'timestamp', 'original', 'mimetype', 'statuscode', 'digest', 'length'] as const;
type CdxField = (typeof CDX_FIELDS)[number];

/** One capture as the CDX lists it; `statuscode` is "-" for warc/revisit rows. */
export type CdxRow = Partial<Record<CdxField, string>> & { timestamp: string; original: string };

export interface CdxPage {
  rows: CdxRow[];
  /** Given (as printed, still URL-encoded) when the query has more rows; pass it back as `resumeKey`. */
  resumeKey?: string;
}

export class CdxFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CdxFormatError';
  }
}

const TIMESTAMP = /^\d{14}$/;

function toRow(values: string[], fields: readonly string[]): CdxRow | undefined {
  let cells = values;
  // An original URL with a raw space would split into more cells than fields: glue it back.
  const originalAt = fields.indexOf('original');
  if (cells.length > fields.length && originalAt >= 0) {
    const extra = cells.length - fields.length;
    cells = [
      ...cells.slice(0, originalAt),
      cells.slice(originalAt, originalAt + extra + 1).join('%20'),
      ...cells.slice(originalAt + extra + 1),
    ];
  }
  if (cells.length !== fields.length) return undefined;
  const row: Record<string, string> = {};
  fields.forEach((field, index) => {
    row[field] = cells[index]!;
  });
  if (!row.timestamp || !TIMESTAMP.test(row.timestamp) || !row.original) return undefined;
  return row as CdxRow;
}

/**
 * Parses a CDX answer: the default space-separated lines (fields in `fields` order, the `fl` asked
 * for) or `output=json` (a header row, then rows). With showResumeKey the text form ends with a blank
 * line and the key; the JSON form with `[]` and `[key]`. Rows repeated verbatim (the Wayback's
 * indexes overlap) are given once.
 */
export function parseCdx(body: string, fields: readonly string[] = CDX_FIELDS): CdxPage {
  const text = body.replace(/^\uFEFF/, '');
  const trimmed = text.trimStart();
  const rows: CdxRow[] = [];
  const seen = new Set<string>();
  const push = (key: string, row: CdxRow | undefined) => {
    if (!row || seen.has(key)) return;
    seen.add(key);
    rows.push(row);
  };
  if (trimmed.startsWith('[')) {
    let data: unknown;
    try {
      data = JSON.parse(trimmed);
    } catch {
      throw new CdxFormatError('CDX answer is not valid JSON');
    }
    if (!Array.isArray(data)) throw new CdxFormatError('CDX JSON answer is not an array');
    if (data.length === 0) return { rows };
    const header = data[0];
    if (!Array.isArray(header) || !header.every((cell) => typeof cell === 'string'))
      throw new CdxFormatError('CDX JSON answer has no header row');
    let resumeKey: string | undefined;
    for (let index = 1; index < data.length; index++) {
      const entry = data[index];
      if (!Array.isArray(entry)) continue;
      if (entry.length === 0) {
        const key = data[index + 1];
        if (Array.isArray(key) && typeof key[0] === 'string' && key[0]) resumeKey = key[0];
        break;
      }
      const cells = entry.map((cell) => String(cell));
      push(cells.join(' '), toRow(cells, header as string[]));
    }
    return resumeKey ? { rows, resumeKey } : { rows };
  }
  if (/^<(?:!doctype|html|\?xml)/i.test(trimmed)) throw new CdxFormatError('CDX answered with a page, not an index');
  const lines = text.split(/\r?\n/);
  let resumeKey: string | undefined;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    if (!line) {
      // After the blank line comes the resume key (the last non-empty line).
      const rest = lines
        .slice(index + 1)
        .map((entry) => entry.trim())
        .filter(Boolean);
      if (rest.length === 1 && !rest[0]!.includes(' ')) resumeKey = rest[0];
      else if (rest.length > 0) continue; // a stray blank line between rows
      break;
    }
    push(line, toRow(line.split(/ +/), fields));
  }
  return resumeKey ? { rows, resumeKey } : { rows };
}

/** "com,cnn)/ 20010414005939": the position of a row in the index, for resuming within a page. */
export const rowPosition = (row: CdxRow): string => `${row.urlkey ?? ''} ${row.timestamp}`;
