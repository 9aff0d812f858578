/**
 * A small playable media file written without any tool: a WAV (RIFF, 16-bit PCM, mono) of a
 * few seconds of a soft two-tone chime, which every browser's media element plays and seeks.
 */

const SAMPLE_RATE = 8_000;

export function chimeWav(seconds: number, baseHz: number): Buffer {
  const samples = Math.round(seconds * SAMPLE_RATE);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    const t = i / SAMPLE_RATE;
    // Each half second a new note, fading out, so seeking is audible.
    const note = Math.floor(t * 2) % 2 === 0 ? baseHz : baseHz * 1.5;
    const envelope = Math.exp(-4 * (t % 0.5));
    data.writeInt16LE(Math.round(Math.sin(2 * Math.PI * note * t) * envelope * 12_000), i * 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * 2, 28); // bytes per second
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
