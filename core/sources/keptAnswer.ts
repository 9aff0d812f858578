/** A source's answer as evidence keeps it: the request as the platform would be asked it, with no secret. */
import { recordAnswers, type RawAnswer } from './http.ts';

export type KeptAnswer = RawAnswer;

/** Query parameters that carry credentials: removed (the value replaced) from every kept URL. */
const SECRET_PARAMS = /^(key|api_?key|access_token|token|auth|signature|sig)$/i;

/**
 * The request URL as kept: on `publicOrigin` (the platform's own origin; the configured one may be an
 * internal proxy nobody outside should learn of), every credential parameter's value replaced by ***.
 */
function keptRequestUrl(requested: string, publicOrigin: string): string {
  const url = new URL(requested);
  const kept = new URL(`${url.pathname}${url.search}`, publicOrigin);
  for (const name of [...kept.searchParams.keys()]) if (SECRET_PARAMS.test(name)) kept.searchParams.set(name, '***');
  return kept.toString().replaceAll('%2A%2A%2A', '***');
}

/** The answer with its URL as kept. */
const keptAnswer = (answer: RawAnswer, publicOrigin: string): KeptAnswer => ({
  ...answer,
  url: keptRequestUrl(answer.url, publicOrigin),
});

/** `work`'s result and the last answer a source gave inside it, as evidence keeps it. */
export async function withLastAnswer<T>(publicOrigin: string, work: () => Promise<T>): Promise<{ result: T; answer?: KeptAnswer }> {
  let answer: KeptAnswer | undefined;
  const result = await recordAnswers((raw) => {
    answer = keptAnswer(raw, publicOrigin);
  }, work);
  return answer ? { result, answer } : { result };
}
