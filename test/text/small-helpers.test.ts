import { describe, expect, it } from 'vitest';
import { decodeURIComponentSafe } from '../../core/text/decodeUriComponentSafe.ts';
import { escapeRegExp } from '../../core/text/escapeRegExp.ts';
import { asObject, asString, isObject } from '../../core/youtube/json.ts';

describe('small helpers', () => {
  it('decodeURIComponentSafe decodes, and keeps malformed escapes as written', () => {
    expect(decodeURIComponentSafe('%40caf%C3%A9')).toBe('@café');
    expect(decodeURIComponentSafe('100%')).toBe('100%');
    expect(decodeURIComponentSafe('%E0%A4%A')).toBe('%E0%A4%A');
  });

  it('escapeRegExp makes every special character literal', () => {
    const text = 'a.b*c+d?e^f$g{h}i(j)k|l[m]n\\o';
    expect(new RegExp(`^${escapeRegExp(text)}$`).test(text)).toBe(true);
    expect(new RegExp(escapeRegExp('a.b')).test('axb')).toBe(false);
  });

  it('isObject takes plain objects only', () => {
    expect(isObject({})).toBe(true);
    expect(isObject({ a: 1 })).toBe(true);
    for (const value of [null, undefined, [], 'x', 1, true]) expect(isObject(value)).toBe(false);
    expect(asObject([1])).toBeUndefined();
    expect(asObject({ a: 1 })).toEqual({ a: 1 });
    expect(asString('')).toBe('');
    expect(asString(1)).toBeUndefined();
  });
});
