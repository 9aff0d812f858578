import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { z } from 'zod';
import { invalidInput } from '../errors.ts';
import { isPrivateAddress } from '../sources/privateAddress.ts';
import type { Lookup } from '../sources/upstream.ts';

/** A receiver's URL as an owner gives it: http(s), no user name or password in it, at most 2000 characters. */
export const endpointUrl = z
  .string()
  .trim()
  .max(2000, { message: 'expected at most 2000 characters' })
  .pipe(z.url({ protocol: /^https?$/, message: 'expected an http or https URL' }))
  .refine((url) => !URL.parse(url)?.username && !URL.parse(url)?.password, {
    message: 'expected no user name or password in the URL: the signature proves the sender, the receiver needs no credentials',
  })
  .transform((url) => URL.parse(url)?.href ?? url);

/** The host's addresses, all of them, or the resolver's error. */
const addressesOf = (lookup: Lookup, host: string) =>
  new Promise<string[]>((resolve, reject) =>
    lookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses.map((entry) => entry.address)))),
  );

/**
 * Refuses (400) a receiver that is not on the public internet: an address or a name resolving to a
 * private, loopback or otherwise non-public address, or a name that does not resolve. Deliveries
 * check again at connect time (postWebhook.ts), so a name that changes later is refused then.
 */
export async function refuseNonPublicReceiver(url: string, lookup: Lookup = dnsLookup): Promise<void> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await addressesOf(lookup, host);
  } catch {
    throw invalidInput(`url: ${host} does not resolve to an address`);
  }
  const refused = addresses.find(isPrivateAddress);
  if (refused)
    throw invalidInput(
      `url: ${host} is ${refused === host ? 'not a public address' : `at ${refused}, not a public address`}; webhooks reach only public addresses unless the operator sets WEBHOOK_ALLOW_PRIVATE=true`,
    );
}
