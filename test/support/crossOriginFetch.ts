/**
 * fetch as a page on another origin makes it, by the Fetch standard's CORS rules: what a browser
 * does for scripts (EventSource, the MCP SDK's transport, fetch), so third-party clients can be
 * driven cross-origin in Node, where fetch checks nothing.
 */

const SAFELISTED_METHODS = new Set(['GET', 'HEAD', 'POST']);
const SAFELISTED_CONTENT_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);
/** Response headers every page may read without their being exposed. */
const SAFELISTED_RESPONSE_HEADERS = new Set([
  'cache-control',
  'content-language',
  'content-length',
  'content-type',
  'expires',
  'last-modified',
  'pragma',
]);

/** The request headers that make a request non-simple: the browser asks permission for them first. */
function unsafeHeaders(headers: Headers): string[] {
  const names: string[] = [];
  headers.forEach((value, name) => {
    if (name === 'accept' || name === 'accept-language' || name === 'content-language') return;
    if (name === 'content-type' && SAFELISTED_CONTENT_TYPES.has(value.split(';')[0]!.trim().toLowerCase())) return;
    names.push(name);
  });
  return names.sort();
}

const listed = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);

export class CorsRefusal extends TypeError {}

/** A fetch for a page on `origin`; each refusal throws CorsRefusal (a browser's network error), each preflight is recorded in `preflights`. */
export function browserFetch(origin: string, preflights: Array<{ url: string; status: number }> = []) {
  return async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = String(input instanceof Request ? input.url : input);
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    const unsafe = unsafeHeaders(headers);
    if (!SAFELISTED_METHODS.has(method) || unsafe.length > 0) {
      const preflight = await fetch(url, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': method,
          ...(unsafe.length ? { 'Access-Control-Request-Headers': unsafe.join(',') } : {}),
        },
      });
      await preflight.body?.cancel();
      preflights.push({ url, status: preflight.status });
      if (preflight.status < 200 || preflight.status > 299)
        throw new CorsRefusal(`CORS: the preflight of ${method} ${url} answered ${preflight.status}`);
      if (preflight.headers.get('access-control-allow-origin') !== origin)
        throw new CorsRefusal(`CORS: the preflight of ${url} did not grant ${origin}`);
      const methods = listed(preflight.headers.get('access-control-allow-methods'));
      if (!SAFELISTED_METHODS.has(method) && !methods.includes(method.toLowerCase()))
        throw new CorsRefusal(`CORS: ${method} is not allowed on ${url}`);
      const allowedHeaders = listed(preflight.headers.get('access-control-allow-headers'));
      const missing = unsafe.filter((name) => !allowedHeaders.includes(name));
      if (missing.length) throw new CorsRefusal(`CORS: request headers ${missing.join(', ')} are not allowed on ${url}`);
    }
    headers.set('Origin', origin);
    const response = await fetch(url, { ...init, method, headers });
    if (response.headers.get('access-control-allow-origin') !== origin) {
      await response.body?.cancel();
      throw new CorsRefusal(`CORS: ${origin} was not granted the answer of ${method} ${url}`);
    }
    if (response.headers.get('access-control-allow-credentials') !== null)
      throw new CorsRefusal('CORS: credentials granted, though none are used');
    // The page sees only safelisted and exposed response headers.
    const exposed = new Set([...SAFELISTED_RESPONSE_HEADERS, ...listed(response.headers.get('access-control-expose-headers'))]);
    const visible = new Headers();
    response.headers.forEach((value, name) => {
      if (exposed.has(name)) visible.set(name, value);
    });
    return new Response([204, 205, 304].includes(response.status) ? null : response.body, {
      status: response.status,
      statusText: response.statusText,
      headers: visible,
    });
  };
}
