const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export interface OriginRule {
  /** Exact origins allowed (PUBLIC_URL's and CORS_ORIGINS). */
  origins: string[];
  /** The service listens on a loopback address: pages served from a loopback origin (any port) are local software. */
  loopback: boolean;
}

/**
 * The MCP transport's DNS-rebinding rule: a browser page may call /mcp only from an allowed origin
 * (a rebinding attack shows the attacker's host name in Origin, never a loopback one). Clients that
 * send no Origin (desktop assistants, CLIs, servers) are not browsers and pass: the API key decides.
 */
export function originAllowed(origin: string | undefined, rule: OriginRule): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (
    rule.origins.includes(url.origin.toLowerCase()) ||
    (rule.loopback && LOOPBACK.has(url.hostname) && (url.protocol === 'http:' || url.protocol === 'https:'))
  );
}

/** The rule for a configuration: PUBLIC_URL's origin and the CORS_ORIGINS, and loopback origins when HOST is a loopback address. */
export const originRule = (config: { PUBLIC_URL?: string | undefined; HOST: string; CORS_ORIGINS?: readonly string[] }): OriginRule => ({
  origins: [...(config.PUBLIC_URL ? [new URL(config.PUBLIC_URL).origin.toLowerCase()] : []), ...(config.CORS_ORIGINS ?? [])],
  loopback: LOOPBACK.has(config.HOST),
});
