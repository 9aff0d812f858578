import { describe, expect, it } from 'vitest';
import { originAllowed, originRule } from '../../api/mcp/handler.ts';

describe('the /mcp Origin rule', () => {
  const local = originRule({ HOST: '127.0.0.1' });
  const hosted = originRule({ HOST: '0.0.0.0', PUBLIC_URL: 'https://archive.example.org/base' });

  it('lets clients without an Origin through', () => {
    expect(originAllowed(undefined, hosted)).toBe(true);
  });
  it('allows loopback pages only when the service listens on loopback', () => {
    expect(originAllowed('http://localhost:5173', local)).toBe(true);
    expect(originAllowed('http://127.0.0.1:8080', local)).toBe(true);
    expect(originAllowed('http://localhost:5173', hosted)).toBe(false);
  });
  it("allows PUBLIC_URL's origin, nothing else", () => {
    expect(originAllowed('https://archive.example.org', hosted)).toBe(true);
    expect(originAllowed('https://ARCHIVE.example.org', hosted)).toBe(true);
    expect(originAllowed('https://evil.example', hosted)).toBe(false);
    expect(originAllowed('https://evil.example', local)).toBe(false);
    expect(originAllowed('null', local)).toBe(false);
  });
});
