/**
 * The thumbnail yt-dlp's --write-thumbnail keeps beside a demo video: a 16:9 JPEG of a colour of its
 * own (from its id) with diagonal stripes and a play mark, drawn by sharp from SVG.
 */
import { createHash } from 'node:crypto';
import sharp from 'sharp';

export function demoThumbnail(videoId: string): Promise<Buffer> {
  const hue = createHash('sha1').update(videoId).digest().readUInt16BE(0) % 360;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="270">
  <defs><pattern id="s" width="36" height="36" patternUnits="userSpaceOnUse" patternTransform="rotate(35)">
    <rect width="18" height="36" fill="hsl(${hue},55%,62%)"/></pattern></defs>
  <rect width="480" height="270" fill="hsl(${hue},50%,45%)"/>
  <rect width="480" height="270" fill="url(#s)" opacity="0.45"/>
  <circle cx="240" cy="135" r="46" fill="#ffffff" opacity="0.85"/>
  <path d="M226 112 L262 135 L226 158 Z" fill="hsl(${hue},50%,35%)"/>
</svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 80 }).toBuffer();
}
