import type { Sql } from '../db/database.ts';
import { generateStreamToken, hashToken } from '../keys.ts';

/** How long a stream token opens its stream: long enough for a page to connect and reconnect after a blip, short enough that a leaked URL is soon worthless. */
export const STREAM_TOKEN_MINUTES = 10;
/** Expired tokens are kept this long, so using one says "expired" rather than "unknown", then swept. */
const EXPIRED_KEPT = '1 day';

export interface MintedStreamToken {
  token: string;
  expiresAt: Date;
}

/**
 * A new token that opens `streamPath` as the key `keyId` for STREAM_TOKEN_MINUTES. Only its hash is
 * stored; the token itself exists only in this answer. Tokens long expired are swept in the same statement.
 */
export async function mintStreamToken(sql: Sql, keyId: string, streamPath: string): Promise<MintedStreamToken> {
  const token = generateStreamToken();
  const [row] = await sql<{ expiresAt: Date }[]>`
    with swept as (delete from stream_tokens where expires_at < now() - ${EXPIRED_KEPT}::interval)
    insert into stream_tokens (token_hash, key_id, stream_path, expires_at)
    values (${hashToken(token)}, ${keyId}, ${streamPath}, now() + make_interval(mins => ${STREAM_TOKEN_MINUTES}))
    returning expires_at as "expiresAt"`;
  return { token, expiresAt: row!.expiresAt };
}
