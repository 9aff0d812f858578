import type { IncomingMessage } from 'node:http';
import { SESSION_MAX_DAYS } from '../../core/accounts/createSession.ts';
import type { Config } from '../../core/config.ts';
import { readCookie, setCookie } from './cookies.ts';

const SESSION = 'afterimage_session';

/** The session token the browser sent, if any (valid or not). */
export const sessionToken = (req: IncomingMessage, config: Pick<Config, 'PUBLIC_URL'>) => readCookie(req, config, SESSION);

/** Set-Cookie for a new session (lasting as long as a session may); without a token, the cookie's removal. */
export const sessionCookie = (config: Pick<Config, 'PUBLIC_URL'>, token?: string) =>
  setCookie(config, SESSION, token ?? '', token ? SESSION_MAX_DAYS * 86_400 : 0);
