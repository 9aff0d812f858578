import { z } from 'zod';
import { videoIdSchema } from '../schemas.ts';

/**
 * The only names a stored stenogram document can have: a user id (lower case, as Postgres prints
 * uuids) and a video id. Stores parse both before touching a disk or bucket, so no input reaches elsewhere.
 */
export const documentIds = z.object({ userId: z.uuid().transform((id) => id.toLowerCase()), videoId: videoIdSchema });
