import { fileURLToPath } from 'node:url';

/** The local path of a file:// URL the archive recorded (a media file, an info.json); undefined for any other URL. */
export const localPath = (url: string): string | undefined => {
  if (!url.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(url);
  } catch {
    return undefined;
  }
};
