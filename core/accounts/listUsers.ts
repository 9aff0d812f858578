import type { Sql } from '../db/database.ts';
import type { User } from './createUser.ts';

export interface UserListing extends User {
  hasPassword: boolean;
  activeKeyPrefix: string | null;
  lastSignInAt: Date | null;
}

/** Every user, oldest first, for administrators: whether they can sign in, their active key's prefix. */
export async function listUsers(sql: Sql): Promise<UserListing[]> {
  return sql<UserListing[]>`
    select u.id, u.email, u.tier, u.is_admin as "isAdmin", u.created_at as "createdAt", u.password_hash is not null as "hasPassword",
      (select k.key_prefix from api_keys k where k.user_id = u.id and k.revoked_at is null) as "activeKeyPrefix",
      (select max(s.created_at) from sessions s where s.user_id = u.id) as "lastSignInAt"
    from users u order by u.created_at, u.email`;
}
