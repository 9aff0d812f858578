/**
 * A ZIP of stored (uncompressed) files written as they are added: each file's header and bytes go
 * out at once, and only its name, CRC, size and offset are kept for the central directory at the end
 * (fflate's Zip keeps each file's stream object until then: megabytes per thousand files). Every
 * entry carries the same time, 1980-01-01 00:00 (DOS date 0x21, time 0), so the same files in the
 * same order give the same bytes. At most 65,535 files and 4 GiB, the limits of a ZIP without ZIP64.
 */
import { crc32 } from 'node:zlib';

const DOS_DATE = 0x21;
/** General purpose flag 11: names are UTF-8. */
const UTF8_NAMES = 0x0800;
const MAX_ENTRIES = 0xffff;
const MAX_OFFSET = 0xffffffff;

export function storedZip(write: (chunk: Uint8Array) => Promise<void>) {
  const entries: Array<{ name: Buffer; crc: number; size: number; offset: number }> = [];
  let offset = 0;
  const out = async (chunk: Uint8Array) => {
    offset += chunk.length;
    await write(chunk);
  };
  return {
    async add(path: string, bytes: Uint8Array): Promise<void> {
      if (entries.length === MAX_ENTRIES || offset + bytes.length > MAX_OFFSET)
        throw new Error(`a bundle holds at most ${MAX_ENTRIES} files and 4 GiB; export fewer videos at a time`);
      const name = Buffer.from(path, 'utf8');
      const crc = crc32(bytes);
      const header = Buffer.alloc(30);
      header.writeUInt32LE(0x04034b50, 0);
      header.writeUInt16LE(20, 4);
      header.writeUInt16LE(UTF8_NAMES, 6);
      header.writeUInt16LE(0, 8); // stored
      header.writeUInt16LE(0, 10);
      header.writeUInt16LE(DOS_DATE, 12);
      header.writeUInt32LE(crc, 14);
      header.writeUInt32LE(bytes.length, 18);
      header.writeUInt32LE(bytes.length, 22);
      header.writeUInt16LE(name.length, 26);
      header.writeUInt16LE(0, 28);
      entries.push({ name, crc, size: bytes.length, offset });
      await out(Buffer.concat([header, name]));
      await out(bytes);
    },
    async end(): Promise<void> {
      const start = offset;
      for (const entry of entries) {
        const record = Buffer.alloc(46);
        record.writeUInt32LE(0x02014b50, 0);
        record.writeUInt16LE(20, 4);
        record.writeUInt16LE(20, 6);
        record.writeUInt16LE(UTF8_NAMES, 8);
        record.writeUInt16LE(0, 10);
        record.writeUInt16LE(0, 12);
        record.writeUInt16LE(DOS_DATE, 14);
        record.writeUInt32LE(entry.crc, 16);
        record.writeUInt32LE(entry.size, 20);
        record.writeUInt32LE(entry.size, 24);
        record.writeUInt16LE(entry.name.length, 28);
        // extra, comment, disk, internal and external attributes: 0.
        record.writeUInt32LE(entry.offset, 42);
        await out(Buffer.concat([record, entry.name]));
      }
      const end = Buffer.alloc(22);
      end.writeUInt32LE(0x06054b50, 0);
      end.writeUInt16LE(entries.length, 8);
      end.writeUInt16LE(entries.length, 10);
      end.writeUInt32LE(offset - start, 12);
      end.writeUInt32LE(start, 16);
      await out(end);
    },
  };
}
