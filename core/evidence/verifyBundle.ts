/**
 * Checks an evidence bundle offline (`afterimage evidence verify`, the /evidence/verify page): every
 * file's size and SHA-256 against manifest.json, the manifest against README.txt's first line, no file
 * missing or added, each raw body decompressing to the hash its record gives, and each status history
 * consistent (an entry's previous status is the status of the entry before it), each kept answer a metadata or
 * subtitle version names present beside it, and the RFC 3161 token
 * (timestamp.tsr) when the manifest names an authority. Each problem names its file.
 */
import { createHash } from 'node:crypto';
import type { Gunzip } from 'fflate';
import { EVIDENCE_FORMAT, MANIFEST, README, readmeText, type Manifest, type TimestampNote } from './bundle.ts';
import { byteBudget, readEntry, unsafeName, zipEntries, ZipProblem, type ZipBytes, type ZipEntry, type ZipLimits } from './readZip.ts';
import { checkTimestamp, TIMESTAMP_TOKEN } from './timestamp.ts';
import { OBSERVATION_FILE } from './versions.ts';

interface BundleProblem {
  file: string;
  problem: string;
}

export interface Verdict {
  ok: boolean;
  format: string | null;
  manifestSha256: string | null;
  /** Files listed in the manifest and found as it says. */
  checkedFiles: number;
  /** What the RFC 3161 token attests (ISO 8601 time, the signer's certificate subject); null when the bundle has no valid one. */
  timestamp: { attestedAt: string; signer: string } | null;
  problems: BundleProblem[];
}

const DEFAULT_LIMITS: ZipLimits = { maxTotalBytes: 8 * 1024 ** 3, maxRatio: 1000, maxEntries: 500_000 };
/** The texts a check reads (the manifest, records, histories) are kept in memory up to this size each. */
const MAX_TEXT = 64 * 1024 * 1024;
/** A timestamp token is a few kilobytes; one larger is not kept to be read. */
const MAX_TOKEN = 1024 * 1024;

interface EntryFacts {
  size: number;
  sha256: string;
  text?: string;
  /** The bytes of the timestamp token. */
  bytes?: Uint8Array;
  /** For a .gz: its decompressed SHA-256 and size, or why it does not decompress. */
  gunzipped?: { sha256: string; size: number } | { error: string };
}

const isText = (name: string) => name.endsWith('.json') || name.endsWith('.txt');

/** Reads one entry: hashed as it streams; a .gz decompressed as it streams (within the byte budget); a text kept. */
async function readFacts(
  zip: ZipBytes,
  entry: ZipEntry,
  dataEnd: number,
  limits: ZipLimits,
  budget: ReturnType<typeof byteBudget>,
): Promise<EntryFacts> {
  const hash = createHash('sha256');
  const texts: Uint8Array[] = [];
  const keepBytes = isText(entry.name) || entry.name === TIMESTAMP_TOKEN;
  let size = 0;
  let inner: { hash: ReturnType<typeof createHash>; size: number; gunzip: Gunzip; error?: string } | undefined;
  if (entry.name.endsWith('.gz')) {
    // fflate is loaded by the first .gz checked, not with every process.
    const { Gunzip } = await import('fflate');
    const innerHash = createHash('sha256');
    const state = {
      hash: innerHash,
      size: 0,
      error: undefined as string | undefined,
      gunzip: new Gunzip((piece) => {
        state.size += piece.length;
        budget.take(entry.name, piece.length);
        innerHash.update(piece);
      }),
    };
    inner = state;
  }
  await readEntry(zip, entry, dataEnd, limits, budget, (piece) => {
    hash.update(piece);
    size += piece.length;
    if (keepBytes && size <= MAX_TEXT) texts.push(piece);
    if (inner && !inner.error) {
      try {
        inner.gunzip.push(piece, size === entry.size);
      } catch (error) {
        if (error instanceof ZipProblem) throw error;
        inner.error = 'does not decompress as gzip';
      }
    }
  });
  return {
    size,
    sha256: hash.digest('hex'),
    ...(isText(entry.name) && size <= MAX_TEXT ? { text: Buffer.concat(texts).toString('utf8') } : {}),
    ...(entry.name === TIMESTAMP_TOKEN && size <= MAX_TOKEN ? { bytes: Buffer.concat(texts) } : {}),
    ...(inner ? { gunzipped: inner.error ? { error: inner.error } : { sha256: inner.hash.digest('hex'), size: inner.size } } : {}),
  };
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export async function verifyBundle(
  zip: ZipBytes,
  limits: ZipLimits = DEFAULT_LIMITS,
  progress?: (done: number, total: number) => void,
): Promise<Verdict> {
  const problems: BundleProblem[] = [];
  let timestamp: Verdict['timestamp'] = null;
  const verdict = (manifestSha256: string | null, format: string | null, checkedFiles: number): Verdict => ({
    ok: problems.length === 0,
    format,
    manifestSha256,
    checkedFiles,
    timestamp,
    problems,
  });
  let listing: Awaited<ReturnType<typeof zipEntries>>;
  try {
    listing = await zipEntries(zip, limits);
  } catch (error) {
    if (!(error instanceof ZipProblem)) throw error;
    problems.push({ file: error.file, problem: error.message });
    return verdict(null, null, 0);
  }
  const budget = byteBudget(limits);
  const facts = new Map<string, EntryFacts>();
  for (const [index, entry] of listing.entries.entries()) {
    progress?.(index, listing.entries.length);
    const unsafe = unsafeName(entry.name);
    if (unsafe) {
      problems.push({ file: entry.name, problem: `its name ${unsafe}: not read` });
      continue;
    }
    if (facts.has(entry.name)) {
      problems.push({ file: entry.name, problem: 'is in the ZIP twice' });
      continue;
    }
    try {
      facts.set(entry.name, await readFacts(zip, entry, listing.directoryOffset, limits, budget));
    } catch (error) {
      if (!(error instanceof ZipProblem)) throw error;
      problems.push({ file: error.file, problem: error.message });
      if (/ZIP bomb/.test(error.message)) return verdict(null, null, 0);
    }
  }

  const manifestFacts = facts.get(MANIFEST);
  const manifest = parseJson(manifestFacts?.text) as Manifest | undefined;
  if (!manifestFacts) {
    problems.push({ file: MANIFEST, problem: 'is missing' });
    return verdict(null, null, 0);
  }
  if (!manifest || typeof manifest !== 'object' || !Array.isArray(manifest.files)) {
    problems.push({ file: MANIFEST, problem: 'is not a manifest (JSON with a files list)' });
    return verdict(manifestFacts.sha256, null, 0);
  }
  if (manifest.format !== EVIDENCE_FORMAT)
    problems.push({ file: MANIFEST, problem: `says format ${String(manifest.format)}; this checks ${EVIDENCE_FORMAT}` });
  const note = await checkToken(facts, manifest, manifestFacts, problems);
  if (note && note !== 'unavailable') timestamp = { attestedAt: note.attestedAt.toISOString(), signer: note.signer };
  const readme = facts.get(README);
  if (!readme) problems.push({ file: README, problem: 'is missing' });
  else if (readme.text?.split('\n', 1)[0] !== manifestFacts.sha256)
    problems.push({
      file: README,
      problem: `its first line is not the SHA-256 of manifest.json (${manifestFacts.sha256}): one of them was changed`,
    });
  else if (note !== null && readme.text !== readmeText(manifestFacts.sha256, note))
    problems.push({ file: README, problem: 'was changed (its text is not the one written)' });

  let checked = 0;
  const listed = new Set<string>();
  for (const file of manifest.files) {
    listed.add(file.path);
    const found = facts.get(file.path);
    if (!found) {
      if (!problems.some((p) => p.file === file.path))
        problems.push({ file: file.path, problem: 'is listed in manifest.json but missing' });
      continue;
    }
    if (found.size !== file.size) problems.push({ file: file.path, problem: `has ${found.size} bytes; manifest.json says ${file.size}` });
    else if (found.sha256 !== file.sha256)
      problems.push({ file: file.path, problem: 'was changed: its SHA-256 is not the one in manifest.json' });
    else checked++;
  }
  for (const name of facts.keys())
    if (name !== MANIFEST && name !== README && !(name === TIMESTAMP_TOKEN && manifest.timestampAuthority) && !listed.has(name))
      problems.push({ file: name, problem: 'is not listed in manifest.json (added)' });

  checkBodies(facts, problems);
  checkHistories(facts, problems);
  checkLinks(facts, problems);
  return verdict(manifestFacts.sha256, String(manifest.format), checked);
}

/** Where README.txt gives the token's SHA-256. */
const TOKEN_HASH = new RegExp(`^${TIMESTAMP_TOKEN.replace('.', '\\.')} \\(SHA-256 ([0-9a-f]{64})\\)`, 'm');

/**
 * The token of a bundle whose manifest names an authority: it must attest the manifest, signed by the
 * certificate it carries. What README.txt must then say of it; null when that cannot be known (a bad token).
 */
async function checkToken(
  facts: Map<string, EntryFacts>,
  manifest: Manifest,
  manifestFacts: EntryFacts,
  problems: BundleProblem[],
): Promise<TimestampNote | null> {
  const token = facts.get(TIMESTAMP_TOKEN);
  if (!manifest.timestampAuthority || !token) return manifest.timestampAuthority ? 'unavailable' : undefined;
  const manifestBytes = Buffer.from(manifestFacts.text ?? '', 'utf8');
  const checked = token.bytes
    ? await checkTimestamp(token.bytes, manifestBytes)
    : { ok: false as const, problem: 'is too large for a token' };
  const given = TOKEN_HASH.exec(facts.get(README)?.text ?? '')?.[1];
  if (checked.ok && given === token.sha256) return { ...checked, tokenSha256: token.sha256 };
  problems.push({
    file: TIMESTAMP_TOKEN,
    problem: checked.ok ? 'was changed: its SHA-256 is not the one README.txt gives' : checked.problem,
  });
  return null;
}

/** Each observations/<id>.body.gz decompresses to the SHA-256 and size its record gives. */
function checkBodies(facts: Map<string, EntryFacts>, problems: BundleProblem[]) {
  for (const [name, found] of facts) {
    if (!name.endsWith('.body.gz') || !found.gunzipped) continue;
    const recordName = `${name.slice(0, -'.body.gz'.length)}.json`;
    const record = parseJson(facts.get(recordName)?.text) as { bodySha256?: string; bodySize?: number } | undefined;
    if (!record) {
      problems.push({ file: recordName, problem: `is missing or not JSON: the record of ${name}` });
    } else if ('error' in found.gunzipped) problems.push({ file: name, problem: found.gunzipped.error });
    else if (found.gunzipped.sha256 !== record.bodySha256 || found.gunzipped.size !== record.bodySize)
      problems.push({ file: name, problem: `does not decompress to the body ${recordName} records (SHA-256 and size)` });
  }
}

/** Each status-history.json: every entry's previousStatus is the status before it (null on the first). */
function checkHistories(facts: Map<string, EntryFacts>, problems: BundleProblem[]) {
  for (const [name, found] of facts) {
    if (!(name === 'status-history.json' || name.endsWith('/status-history.json'))) continue;
    const history = (parseJson(found.text) as { history?: Array<{ status: string; previousStatus: string | null }> } | undefined)?.history;
    if (!Array.isArray(history)) {
      problems.push({ file: name, problem: 'is not a status history (JSON with a history list)' });
      continue;
    }
    history.forEach((entry, index) => {
      const before = index === 0 ? null : history[index - 1]!.status;
      // The first entry may follow a status the history no longer has; each later one must follow the one before.
      if (index > 0 && entry.previousStatus !== before)
        problems.push({
          file: name,
          problem: `entry ${index + 1} says it followed ${entry.previousStatus ?? 'nothing'}, but the entry before is ${before}`,
        });
    });
  }
}

/** The records whose versions name the kept answer behind them. */
const LINKING = ['metadata-versions.json', 'subtitle-versions.json'];

/** Every observation a metadata-versions.json or subtitle-versions.json names is an observation file of the same video's folder. */
function checkLinks(facts: Map<string, EntryFacts>, problems: BundleProblem[]) {
  for (const [name, found] of facts) {
    const linking = LINKING.find((file) => name === file || name.endsWith(`/${file}`));
    if (!linking) continue;
    const record = parseJson(found.text) as { current?: unknown; versions?: unknown } | unknown[] | undefined;
    // subtitle-versions.json is the list; metadata-versions.json the current values and the list.
    const versions = Array.isArray(record) ? record : Array.isArray(record?.versions) ? [record.current, ...record.versions] : undefined;
    if (!versions) {
      problems.push({ file: name, problem: 'is not a list of versions' });
      continue;
    }
    const folder = name.slice(0, -linking.length);
    // The current metadata and its newest version may name the same answer: each is reported once.
    const namedOnce = new Set((versions as Array<{ observation?: unknown } | null>).map((version) => version?.observation));
    for (const named of namedOnce) {
      if (named === null || named === undefined) continue;
      if (typeof named !== 'string' || !OBSERVATION_FILE.test(named))
        problems.push({ file: name, problem: `names ${JSON.stringify(named)} as an observation, which is no observations/<id>.json` });
      else if (!facts.has(`${folder}${named}`))
        problems.push({ file: name, problem: `names the kept answer ${folder}${named}, which is not in the bundle` });
    }
  }
}
