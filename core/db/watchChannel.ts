import { onListenConnectionClosed, type Sql } from './database.ts';

export interface ChannelWatch {
  /** Whether LISTEN holds now: every notification committed since `listening` last ran has been (or will be) delivered. */
  isListening(): boolean;
  stop(): Promise<void>;
}

/**
 * LISTEN on `channel` (over the pool's one LISTEN connection, shared with the event hub), knowing when
 * notifications may have been missed: `lost` runs as soon as that connection closes, `listening` once
 * LISTEN holds again (postgres.js listens again by itself), and first when it starts to hold.
 * Whatever is kept on the strength of notifications is dropped in both, and not trusted in between.
 */
export async function watchChannel(
  sql: Sql,
  channel: string,
  handlers: { notified(payload: string): void; lost(): void; listening(): void },
): Promise<ChannelWatch> {
  let listening = false;
  const unhook = onListenConnectionClosed(sql, () => {
    listening = false;
    handlers.lost();
  });
  const listener = await sql
    .listen(channel, handlers.notified, () => {
      listening = true;
      handlers.listening();
    })
    .catch((error: unknown) => {
      unhook();
      throw error;
    });
  return {
    isListening: () => listening,
    async stop() {
      unhook();
      listening = false;
      await listener.unlisten();
    },
  };
}
