/**
 * Thumbnail images as this server keeps and serves them (sharp, on libvips): what a kept image is
 * (its format and size, checked before it is stored) and its renditions, 16:9 WebP at a few widths.
 */
import type { SharpConstructor } from 'sharp';

/** The widths a thumbnail is served at (pages ask for them in a srcset). */
export const THUMBNAIL_WIDTHS = [160, 320, 640] as const;
export type ThumbnailWidth = (typeof THUMBNAIL_WIDTHS)[number];

/** Every rendition is 16:9, the platform's own frame: a 4:3 hqdefault.jpg loses its black bars. */
export const thumbnailHeight = (width: ThumbnailWidth) => Math.round((width * 9) / 16);

/** Changes whenever a rendition's recipe does, so validators of older renditions no longer match. */
export const RENDITION = 'r1';

/** Formats a thumbnail is kept in: what yt-dlp writes and what the platform's image host serves. */
const KEPT_FORMATS = new Set(['jpeg', 'png', 'webp']);

/** sharp, loaded at the first image: loading it and libvips costs every process start-up CPU, and most handle no image. */
let loaded: Promise<SharpConstructor> | undefined;
const loadSharp = () =>
  (loaded ??= import('sharp').then(({ default: sharp }) => {
    // Each process keeps its own renditions (api/routes/videos.ts): libvips' operation cache would only hold them twice.
    sharp.cache(false);
    return sharp;
  }));

/** The format and size of an image, or undefined when the bytes are not a whole image of a kept format. */
export async function imageFacts(bytes: Buffer): Promise<{ format: string; width: number; height: number } | undefined> {
  const sharp = await loadSharp();
  try {
    const { format, width, height } = await sharp(bytes).metadata();
    if (!KEPT_FORMATS.has(format) || !width || !height) return undefined;
    // Decoding the whole image is what tells a cut download from a whole one.
    await sharp(bytes).raw().toBuffer();
    return { format, width, height };
  } catch {
    return undefined;
  }
}

/** The image cropped to 16:9 around its centre and scaled to `width`, as WebP; throws when the bytes are no image. */
export async function thumbnailRendition(image: Buffer, width: ThumbnailWidth): Promise<Buffer> {
  const sharp = await loadSharp();
  return sharp(image).rotate().resize(width, thumbnailHeight(width), { fit: 'cover' }).webp({ quality: 80 }).toBuffer();
}
