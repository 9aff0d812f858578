import type { Sql } from '../db/database.ts';
import { ownerColumns, ownerJoins, type ApiKeyOwner } from './findApiKey.ts';

/** A stream token as stored: the key that minted it (with its owner), the stream it opens, when it expires. */
export interface StreamTokenGrant extends ApiKeyOwner {
  streamPath: string;
  expiresAt: Date;
  expired: boolean;
}

/** The token with this SHA-256 hash, expired or not, its key revoked or not (the caller says which refusal applies). */
export async function findStreamToken(sql: Sql, tokenHash: Uint8Array): Promise<StreamTokenGrant | undefined> {
  const [row] = await sql<StreamTokenGrant[]>`
    select ${ownerColumns(sql)}, s.stream_path as "streamPath", s.expires_at as "expiresAt", s.expires_at <= now() as expired
    from stream_tokens s join api_keys k on k.id = s.key_id ${ownerJoins(sql)}
    where s.token_hash = ${tokenHash as Buffer}`;
  return row;
}
