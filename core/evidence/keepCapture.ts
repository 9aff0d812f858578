import type { Queryable } from '../db/database.ts';
import { captureObservation, keepObservations } from '../status/keepObservations.ts';
import type { ThumbnailCapture } from '../videos/waybackThumbnails.ts';

/** Keeps the Wayback's answer a thumbnail was read from: an observation that decided the thumbnail. */
export const keepThumbnailCapture = (tx: Queryable, capture: ThumbnailCapture): Promise<void> =>
  keepObservations(tx, [captureObservation(capture, 'thumbnail')], []);
