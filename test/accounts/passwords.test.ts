import { scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashPassword, password, verifyPassword } from '../../core/accounts/password.ts';

const SECRET = 'correct horse battery staple';

/** Runs `work` with PASSWORD_HASH_COST set to `cost` (unset when undefined), then puts the suite's back. */
async function withCost<T>(cost: string | undefined, work: () => Promise<T>): Promise<T> {
  const suite = process.env.PASSWORD_HASH_COST;
  if (cost === undefined) delete process.env.PASSWORD_HASH_COST;
  else process.env.PASSWORD_HASH_COST = cost;
  try {
    return await work();
  } finally {
    process.env.PASSWORD_HASH_COST = suite;
  }
}

describe('password hashes', () => {
  it('store the algorithm, its parameters and a random salt beside the hash; never the password', async () => {
    const [first, second] = await Promise.all([hashPassword(SECRET), hashPassword(SECRET)]);
    expect(first).toMatch(/^\$scrypt\$ln=\d+,r=8,p=3\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(second).not.toBe(first); // another salt, another hash
    expect(first).not.toContain(SECRET);
  });

  it("cost N = 2^15 unless PASSWORD_HASH_COST names another power, and a hash of today's cost is not outdated", async () => {
    expect(await withCost(undefined, () => hashPassword(SECRET))).toMatch(/^\$scrypt\$ln=15,r=8,p=3\$/);
    const cheap = await withCost('11', () => hashPassword(SECRET));
    expect(cheap).toMatch(/^\$scrypt\$ln=11,r=8,p=3\$/);
    expect(await withCost('11', () => verifyPassword(SECRET, cheap))).toEqual({ valid: true, outdated: false });
    expect(await withCost('12', () => verifyPassword(SECRET, cheap))).toEqual({ valid: true, outdated: true });
  });

  it('verify the right password only, in Unicode normal form (é typed either way is the same password)', async () => {
    const stored = await hashPassword('café crème brûlée');
    expect(await verifyPassword('café crème brûlée', stored)).toEqual({ valid: true, outdated: false });
    expect(await verifyPassword('cafe\u0301 crème brûlée', stored)).toEqual({ valid: true, outdated: false });
    expect(await verifyPassword('café crème brûlée!', stored)).toEqual({ valid: false, outdated: false });
    expect(await verifyPassword('', stored)).toEqual({ valid: false, outdated: false });
  });

  it('check a hash made with other parameters by its own, and call it outdated so it is made again', async () => {
    const salt = Buffer.from('0123456789abcdef');
    const hash = scryptSync(SECRET, salt, 32, { N: 2 ** 10, r: 8, p: 1 });
    const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');
    const stored = `$scrypt$ln=10,r=8,p=1$${b64(salt)}$${b64(hash)}`;
    expect(await verifyPassword(SECRET, stored)).toEqual({ valid: true, outdated: true });
    expect(await verifyPassword('wrong horse battery staple', stored)).toEqual({ valid: false, outdated: false });
  });

  it('refuse every password when there is no stored hash (key-only users, unknown emails), after the same work', async () => {
    const started = performance.now();
    expect(await withCost(undefined, () => verifyPassword(SECRET, null))).toEqual({ valid: false, outdated: false });
    // A real hash of the default cost was computed (tens of milliseconds at least), so a missing account answers no faster.
    expect(performance.now() - started).toBeGreaterThan(10);
  });

  it('must be at least 12 characters long, and at most 1024', () => {
    expect(password.safeParse('elevenchars').error?.issues[0]?.message).toMatch(/at least 12 characters/);
    expect(password.safeParse('twelve chars').success).toBe(true);
    expect(password.safeParse('x'.repeat(1025)).success).toBe(false);
  });
});
