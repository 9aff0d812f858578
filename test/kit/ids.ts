import { createHash } from 'node:crypto';

// YouTube-shaped ids for made-up videos and channels, stable for their seed text (SHA-1 in base64url, YouTube's alphabet).

/** An 11-character video id. */
export const fakeVideoId = (seed: string): string => createHash('sha1').update(seed).digest('base64url').slice(0, 11);

/** A UC… channel id of 24 characters. */
export const fakeChannelId = (seed: string): string => `UC${createHash('sha1').update(seed).digest('base64url').slice(0, 22)}`;
