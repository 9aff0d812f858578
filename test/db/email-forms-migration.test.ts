import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionUser } from '../../core/accounts/sessionUser.ts';
import { setPassword } from '../../core/accounts/setPassword.ts';
import { signIn } from '../../core/accounts/signIn.ts';
import type { Sql } from '../../core/db/database.ts';
import { migrate } from '../../core/db/migrate.ts';
import { emailSkeleton } from '../../core/email/lookAlikes.ts';
import { createLogger } from '../../core/log.ts';
import { createDatabaseBefore } from '../support/db.ts';

// Upgrading a database whose emails were stored as typed: migrate() as the service runs it at start,
// from migration 042 with the rows sign-ups of that time could store.
let db: Awaited<ReturnType<typeof createDatabaseBefore>>;
let sql: Sql;
const ids: Record<string, string> = {};
const PASSWORD_HASH = `$scrypt$ln=15,r=8,p=3$${'A'.repeat(22)}$${'B'.repeat(43)}`;

async function storeOld(name: string, email: string, createdAt: string): Promise<void> {
  const [row] = await sql<{ id: string }[]>`
    insert into users (email, tier, password_hash, created_at) values (${email}, 'registered', ${PASSWORD_HASH}, ${createdAt}) returning id::text`;
  ids[name] = row!.id;
}

beforeAll(async () => {
  db = await createDatabaseBefore(43);
  sql = db.sql;
  await storeOld('admin', 'admin@afterimage.localhost', '2026-01-01');
  await storeOld('decomposed', 'jose\u0301@example.org', '2026-01-02'); // the older of two forms of one address
  await storeOld('composed', 'jos\u00e9@example.org', '2026-01-03');
  await storeOld('upper', 'Bob@Example.ORG', '2026-01-04');
  await storeOld('lookAlike', '\u0430dmin@afterimage.localhost', '2026-01-05'); // Cyrillic а
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

describe('migration 043 and its data step', () => {
  it('normalises stored emails, fills their skeletons, and reports the accounts it could not make one', async () => {
    const lines: Array<{ msg: string } & Record<string, unknown>> = [];
    const log = createLogger('info', {}, (line) => lines.push(JSON.parse(line)));
    const { applied } = await migrate(sql, db.url, log);
    expect(applied).toContain('043_email_forms.sql');

    const rows = await sql<
      { id: string; email: string; skeleton: string }[]
    >`select id::text, email, email_skeleton as skeleton from users`;
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(ids.upper!)!.email).toBe('bob@example.org');
    // Of two forms of one address, the one already in the normal form keeps it; the other stays as stored.
    expect(byId.get(ids.composed!)!.email).toBe('jos\u00e9@example.org');
    expect(byId.get(ids.decomposed!)!.email).toBe('jose\u0301@example.org');
    for (const row of rows) expect(row.skeleton).toBe(await emailSkeleton(row.email.normalize('NFC')));

    const warned = (text: string) => lines.filter((line) => line.level === 'warn' && line.msg.includes(text));
    expect(warned('one address')).toEqual([
      expect.objectContaining({
        address: 'jos\u00e9@example.org',
        kept: ids.composed,
        others: [{ id: ids.decomposed, email: 'jose\u0301@example.org' }],
      }),
    ]);
    expect(warned('look alike')).toEqual([
      expect.objectContaining({ emails: ['admin@afterimage.localhost', '\u0430dmin@afterimage.localhost'] }),
    ]);
    expect(warned('mixes scripts')).toEqual([expect.objectContaining({ id: ids.lookAlike, scripts: ['Cyrillic', 'Latin'] })]);

    // A sign-in typed in either form reaches the account that kept the address.
    await setPassword(sql, ids.composed!, 'the kept account passphrase');
    const session = await signIn(sql, { email: 'jose\u0301@EXAMPLE.org', password: 'the kept account passphrase', address: '192.0.2.9' });
    expect(await sessionUser(sql, session.token)).toMatchObject({ userId: ids.composed });
  });
});
