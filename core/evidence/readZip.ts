/**
 * Reads a ZIP for checking, without extracting it: the central directory, then each entry's bytes in
 * small pieces, inflated with caps. Untrusted input: unsafe names, sizes the ZIP lies about, entries
 * past its end and inflation beyond the caps are reported as problems of the entry, never written
 * anywhere and never held whole (only the small texts a check reads are kept).
 */
import { crc32 } from 'node:zlib';

/** Random access to the bytes of a ZIP: a buffer (an upload) or an open file. */
export interface ZipBytes {
  size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
}

export const bufferBytes = (buffer: Uint8Array): ZipBytes => ({
  size: buffer.length,
  read: async (offset, length) => buffer.subarray(offset, offset + length),
});

export interface ZipLimits {
  /** Uncompressed bytes over all entries (and everything decompressed inside them). */
  maxTotalBytes: number;
  /** Largest ratio of an entry's uncompressed to compressed size. */
  maxRatio: number;
  maxEntries: number;
}

export interface ZipEntry {
  name: string;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

export class ZipProblem extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
  }
}

const PIECE = 16 * 1024;
const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** A name that could only be written where it belongs: relative, no `..`, no backslash, drive or control character. */
export function unsafeName(name: string): string | undefined {
  if (name === '' || name.endsWith('/')) return 'is a folder or has no name';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'is an absolute path';
  if (name.includes('\\')) return 'has a backslash';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f]/.test(name)) return 'has a control character';
  if (name.split('/').some((part) => part === '..' || part === '.' || part === '')) return 'leads out of its folder (.. or an empty part)';
  return undefined;
}

/** The entries of the central directory, in order. A ZIP without one (truncated, not a ZIP) is a problem of the bundle. */
export async function zipEntries(zip: ZipBytes, limits: ZipLimits): Promise<{ entries: ZipEntry[]; directoryOffset: number }> {
  const tailLength = Math.min(zip.size, 22 + 0xffff);
  const tail = await zip.read(zip.size - tailLength, tailLength);
  let end = -1;
  for (let at = tail.length - 22; at >= 0; at--) {
    if (u32(tail, at) === 0x06054b50) {
      end = at;
      break;
    }
  }
  if (end < 0) throw new ZipProblem('(the bundle)', 'is not a ZIP, or is truncated: its central directory is missing');
  const count = u16(tail, end + 10);
  const directorySize = u32(tail, end + 12);
  const directoryOffset = u32(tail, end + 16);
  const endOffset = zip.size - tailLength + end;
  if (directoryOffset + directorySize > endOffset)
    throw new ZipProblem('(the bundle)', 'is truncated or damaged: its central directory lies past its end');
  if (count > limits.maxEntries) throw new ZipProblem('(the bundle)', `holds ${count} files, more than the ${limits.maxEntries} checked`);
  const directory = await zip.read(directoryOffset, directorySize);
  const entries: ZipEntry[] = [];
  for (let at = 0, index = 0; index < count; index++) {
    if (at + 46 > directory.length || u32(directory, at) !== 0x02014b50)
      throw new ZipProblem('(the bundle)', 'is damaged: its central directory is cut short');
    const nameLength = u16(directory, at + 28);
    const name = Buffer.from(directory.subarray(at + 46, at + 46 + nameLength)).toString('utf8');
    entries.push({
      name,
      method: u16(directory, at + 10),
      crc: u32(directory, at + 16),
      compressedSize: u32(directory, at + 20),
      size: u32(directory, at + 24),
      localOffset: u32(directory, at + 42),
    });
    at += 46 + nameLength + u16(directory, at + 30) + u16(directory, at + 32);
  }
  return { entries, directoryOffset };
}

/** Counts the uncompressed bytes of the whole check against its cap. */
export function byteBudget(limits: ZipLimits) {
  let used = 0;
  return {
    take(file: string, bytes: number) {
      used += bytes;
      if (used > limits.maxTotalBytes)
        throw new ZipProblem(file, `takes the bundle past ${limits.maxTotalBytes} uncompressed bytes: refused as a possible ZIP bomb`);
    },
  };
}

/**
 * Streams one entry's uncompressed bytes to `consume`, in pieces, checking its CRC and that it has
 * exactly the size the ZIP says. Deflated entries are inflated a piece at a time and stopped as soon
 * as they go past that size (a bomb, or a lie).
 */
export async function readEntry(
  zip: ZipBytes,
  entry: ZipEntry,
  dataEnd: number,
  limits: ZipLimits,
  budget: ReturnType<typeof byteBudget>,
  consume: (piece: Uint8Array) => void,
): Promise<void> {
  const fail = (message: string) => new ZipProblem(entry.name, message);
  if (entry.method !== 0 && entry.method !== 8)
    throw fail(`uses compression method ${entry.method}; only stored and deflated files are read`);
  if (entry.size > Math.max(entry.compressedSize, 1) * limits.maxRatio)
    throw fail(`says it inflates ${entry.compressedSize} bytes to ${entry.size}: refused as a possible ZIP bomb`);
  const header = await zip.read(entry.localOffset, 30);
  if (header.length < 30 || u32(header, 0) !== 0x04034b50) throw fail('is missing: its local header is not where the directory says');
  const start = entry.localOffset + 30 + u16(header, 26) + u16(header, 28);
  if (start + entry.compressedSize > dataEnd) throw fail('is truncated: its bytes run past the end of the data');
  let produced = 0;
  let crc = 0;
  const take = (piece: Uint8Array) => {
    produced += piece.length;
    if (produced > entry.size) throw fail(`holds more than the ${entry.size} bytes the ZIP says (a lying size, or a ZIP bomb)`);
    budget.take(entry.name, piece.length);
    crc = crc32(piece, crc);
    consume(piece);
  };
  let failure: unknown;
  // fflate is loaded with the first entry read, not with every process.
  const { Inflate } = await import('fflate');
  const inflate =
    entry.method === 8
      ? new Inflate((piece) => {
          if (failure) return;
          try {
            take(piece);
          } catch (error) {
            failure = error;
          }
        })
      : undefined;
  for (let offset = 0; offset < entry.compressedSize; offset += PIECE) {
    const length = Math.min(PIECE, entry.compressedSize - offset);
    const piece = await zip.read(start + offset, length);
    const last = offset + length >= entry.compressedSize;
    if (!inflate) take(piece);
    else {
      try {
        inflate.push(piece, last);
      } catch {
        throw fail('is damaged: its compressed data does not inflate');
      }
    }
    if (failure) throw failure;
  }
  if (inflate && entry.compressedSize === 0) throw fail('is damaged: a deflated file with no data');
  if (produced !== entry.size) throw fail(`holds ${produced} bytes, not the ${entry.size} the ZIP says (truncated or changed)`);
  if (crc !== entry.crc) throw fail('is damaged: its CRC-32 does not match its bytes');
}
