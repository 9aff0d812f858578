/**
 * The demo's webhook receiver: a local HTTP server (127.0.0.1, a port the system chooses) that
 * verifies each delivery with the `standardwebhooks` package, as a receiver following the
 * specification does, and says what it received. At each start the demo watchlist's webhook is
 * pointed at it afresh: its secret lives only in this process's memory.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Sql } from '../../core/db/database.ts';
import type { ServerKey } from '../../core/secrets/serverKey.ts';
import { createEndpoint } from '../../core/webhooks/createEndpoint.ts';
import { deleteEndpoint } from '../../core/webhooks/deleteEndpoint.ts';
import { selectEndpoints } from '../../core/webhooks/endpoint.ts';
import { sendTestEvent } from '../../core/webhooks/sendTestEvent.ts';

/** The receiver's path: what tells the demo's endpoints from any the administrator added to the watchlist. */
const RECEIVER_PATH = '/demo-webhook';

interface ReceivedDelivery {
  type: string;
  title: string | null;
  verified: boolean;
}

export interface DemoReceiver {
  url: string;
  received: ReceivedDelivery[];
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** One line per delivery: its type, the video's title when it carries a change, and whether its signature held. */
const describe = (delivery: ReceivedDelivery) =>
  `demo: webhook received ${delivery.type}${delivery.title === null ? '' : ` ${JSON.stringify(delivery.title)}`} ` +
  `(${delivery.verified ? 'signature verified' : 'SIGNATURE NOT VERIFIED'})`;

/**
 * Starts the receiver, replaces the demo watchlist's previous demo endpoints with one to it, and sends
 * it a test event (its line shows the webhook works from the start).
 */
export async function startDemoReceiver(
  deps: { sql: Sql; serverKey: ServerKey },
  watchlist: { id: string; ownerId: string },
  say: (line: string) => void,
): Promise<DemoReceiver> {
  const received: ReceivedDelivery[] = [];
  let verifier: Webhook | undefined;
  const server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    let verified = false;
    try {
      verifier?.verify(body, {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      });
      verified = verifier !== undefined;
    } catch {
      verified = false;
    }
    const payload = JSON.parse(body) as { type: string; data?: { title?: string | null } };
    const delivery = { type: payload.type, title: payload.data?.title ?? null, verified };
    received.push(delivery);
    say(describe(delivery));
    // A delivery that fails verification is refused, as a receiver should: the log then shows it failed.
    res.writeHead(verified ? 204 : 401).end();
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${RECEIVER_PATH}`;

  const previous = await selectEndpoints(deps.sql, 'e.watchlist_id = $1', [watchlist.id]);
  for (const endpoint of previous) {
    const { hostname, pathname } = new URL(endpoint.url);
    if (hostname === '127.0.0.1' && pathname === RECEIVER_PATH) await deleteEndpoint(deps.sql, watchlist.id, endpoint.id);
  }
  const endpoint = await createEndpoint(deps.sql, deps.serverKey, { ownerId: watchlist.ownerId, watchlistId: watchlist.id, url });
  if (!endpoint) throw new Error(`the demo watchlist ${watchlist.id} is gone: build the demo again with --fresh`);
  verifier = new Webhook(endpoint.secret);
  await sendTestEvent(deps.sql, watchlist.id, endpoint.id);
  return {
    url,
    received,
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}
