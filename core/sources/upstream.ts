/**
 * Where outbound requests may go. Every request of the sources, subtitle fetchers and probes names
 * its upstream (the Data API, the Wayback Machine or the platform's web pages) and may reach only
 * the origin configured for it (YOUTUBE_API_URL, WAYBACK_URL, YOUTUBE_WEB_URL) and, when that is the
 * platform's public address, the few hosts the platform itself redirects to. Content naming any
 * other origin (a caption track's baseUrl, a redirect) is refused, never fetched.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';

export type UpstreamKind = 'youtube_api' | 'wayback' | 'youtube_web';

/** The public address of each upstream and the hosts it is documented to redirect to. */
const PUBLIC_UPSTREAMS: Record<UpstreamKind, { origin: string; redirectTargets: string[]; maxBytes: number }> = {
  // JSON pages of at most 50 items.
  youtube_api: { origin: 'https://www.googleapis.com', redirectTargets: [], maxBytes: 8 * 2 ** 20 },
  // CDX answers and archived pages; the Wayback redirects only within web.archive.org (to the nearest capture).
  wayback: { origin: 'https://web.archive.org', redirectTargets: [], maxBytes: 32 * 2 ** 20 },
  // Watch pages (about 1–2 MB) and json3 caption tracks (a few MB for a long stream); the bare and
  // mobile hosts redirect to www, and a consent check redirects to consent.youtube.com.
  youtube_web: {
    origin: 'https://www.youtube.com',
    redirectTargets: ['https://youtube.com', 'https://m.youtube.com', 'https://consent.youtube.com'],
    maxBytes: 16 * 2 ** 20,
  },
};

/** The platform's own hosts: these must resolve to public addresses (a rebinding or poisoned resolver is refused). */
const PUBLIC_HOSTS = new Set(
  Object.values(PUBLIC_UPSTREAMS).flatMap(({ origin, redirectTargets }) =>
    [origin, ...redirectTargets].map((url) => new URL(url).hostname),
  ),
);

/** dns.lookup asked for every address of a name. */
export type Lookup = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface Upstream {
  kind: UpstreamKind;
  /**
   * Origins requests may go to. `anyAddress`: an origin the operator configured elsewhere than the
   * platform (a test server, a self-hosted proxy on 127.0.0.1 or a private network) is reached
   * wherever it resolves; every other must resolve to public addresses.
   */
  origins: ReadonlyMap<string, { anyAddress: boolean }>;
  /** Largest response body read, decompressed (a default per kind; a request's maxBytes, from SOURCE_MAX_RESPONSE_BYTES, overrides it). */
  maxBytes: number;
  /** How host names are resolved (dns.lookup; tests resolve a public name to loopback). */
  lookup: Lookup;
}

/**
 * The upstream of a source configured at `configuredUrls` (all of one upstream: the Wayback's CDX
 * and capture URLs, say). The public redirect targets are allowed only when a configured URL is
 * the public origin: a proxy or test server is reached at its own origin and nowhere else.
 */
export function upstreamFor(kind: UpstreamKind, configuredUrls: readonly string[], lookup: Lookup = dnsLookup): Upstream {
  const known = PUBLIC_UPSTREAMS[kind];
  const origins = new Map<string, { anyAddress: boolean }>();
  for (const url of configuredUrls) {
    const { origin, hostname } = new URL(url);
    origins.set(origin, { anyAddress: !PUBLIC_HOSTS.has(hostname) });
    if (origin === known.origin) for (const target of known.redirectTargets) origins.set(target, { anyAddress: false });
  }
  return { kind, origins, maxBytes: known.maxBytes, lookup };
}
