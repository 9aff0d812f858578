import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../core/config.ts';
import { appendCookie, readCookie, setCookie } from '../http/cookies.ts';

/**
 * What a form did, said once on the page it returns to (after its 303): a short-lived cookie holding
 * one of a fixed set of codes, so any page can take it whatever its query string accepts, and no text
 * of the visitor's travels in it.
 */
const NOTICE_COOKIE = 'afterimage_notice';
const KEPT_FOR_SECONDS = 60;

type CookieConfig = Pick<Config, 'PUBLIC_URL'>;

/** Keeps `code` for the next page this browser shows. */
export function keepNotice(res: Pick<ServerResponse, 'getHeader' | 'setHeader'>, config: CookieConfig, code: string): void {
  appendCookie(res, setCookie(config, NOTICE_COOKIE, code, KEPT_FOR_SECONDS));
}

/** The notice kept for this page, once (the cookie is deleted with this answer), as its sentence; undefined when none or unknown. */
export function takeNotice<C extends string>(
  req: IncomingMessage,
  res: Pick<ServerResponse, 'getHeader' | 'setHeader'>,
  config: CookieConfig,
  sentences: Record<C, string>,
): string | undefined {
  const code = readCookie(req, config, NOTICE_COOKIE);
  if (!code) return undefined;
  appendCookie(res, setCookie(config, NOTICE_COOKIE, '', 0));
  return Object.hasOwn(sentences, code) ? sentences[code as C] : undefined;
}
