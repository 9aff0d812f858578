/**
 * A local stand-in for a webhook receiver: verifies every delivery's signature with the
 * `standardwebhooks` package (as a receiver following the specification does) and records it, then
 * answers as scripted: 2xx, any status (500, 410…), a redirect, a hang (never answers), or a slow answer.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type ReceiverBehaviour =
  | { answer: 'ok' }
  | { answer: 'status'; status: number; body?: string }
  | { answer: 'redirect'; location: string }
  | { answer: 'hang' }
  | { answer: 'slow'; ms: number };

interface ReceivedDelivery {
  id: string;
  timestamp: string;
  signature: string;
  /** Whether Webhook.verify accepted it with the receiver's secret. */
  verified: boolean;
  payload: { type: string; timestamp: string; data: any };
  receivedAt: number;
}

export interface WebhookReceiver {
  url: string;
  /** The endpoint's secret (whsec_…): deliveries are verified with it. */
  secret: string | undefined;
  behaviour: ReceiverBehaviour;
  received: ReceivedDelivery[];
  /** Requests that arrived, answered or not (a hanging receiver records none in `received` until… never). */
  requests: number;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startWebhookReceiver(behaviour: ReceiverBehaviour = { answer: 'ok' }): Promise<WebhookReceiver> {
  const sockets = new Set<Socket>();
  const receiver: WebhookReceiver = { url: '', secret: undefined, behaviour, received: [], requests: 0, close: async () => {} };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    receiver.requests++;
    const body = await bodyOf(req);
    const headers = {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    };
    let verified = false;
    try {
      if (receiver.secret) new Webhook(receiver.secret).verify(body, headers);
      verified = Boolean(receiver.secret);
    } catch {
      verified = false;
    }
    const now = receiver.behaviour;
    if (now.answer === 'hang') return;
    if (now.answer === 'slow') await new Promise((done) => setTimeout(done, now.ms));
    receiver.received.push({
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
      verified,
      payload: JSON.parse(body),
      receivedAt: Date.now(),
    });
    if (now.answer === 'status') res.writeHead(now.status, { 'Content-Type': 'text/plain' }).end(now.body ?? '');
    else if (now.answer === 'redirect') res.writeHead(307, { Location: now.location }).end();
    else res.writeHead(204).end();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return receiver;
}
