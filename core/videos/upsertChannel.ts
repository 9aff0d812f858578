import type { Queryable } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { ChannelRecord } from '../sources/types.ts';
import { storableRecords } from './upsertVideos.ts';

/**
 * Records what a source says of a channel: known fields overwrite, unknown ones keep what we had.
 * A handle now used by this channel is taken from any channel that had it before. Its text is
 * sanitised first (storableRecords), logged on `log` when it needed it.
 */
export async function upsertChannel(sql: Queryable, record: ChannelRecord, log?: Logger): Promise<void> {
  const channel = storableRecords([record], { of: 'channel', channelId: record.channelId }, log)[0]!;
  if (channel.handle) {
    await sql`update channels set handle = null where lower(handle) = lower(${channel.handle}) and channel_id <> ${channel.channelId}`;
  }
  await sql`
    insert into channels as c (channel_id, title, handle, custom_url, description, avatar_url, banner_url, subscriber_count, video_count, country, channel_status)
    values (${channel.channelId}, ${channel.title ?? ''}, ${channel.handle ?? null}, ${channel.customUrl ?? null}, ${channel.description ?? null},
      ${channel.avatarUrl ?? null}, ${channel.bannerUrl ?? null}, ${channel.subscriberCount ?? null}, ${channel.videoCount ?? null},
      ${channel.country ?? null}, ${channel.channelStatus ?? 'live'})
    on conflict (channel_id) do update set
      title = coalesce(nullif(excluded.title, ''), c.title),
      handle = coalesce(excluded.handle, c.handle),
      custom_url = coalesce(excluded.custom_url, c.custom_url),
      description = coalesce(excluded.description, c.description),
      avatar_url = coalesce(excluded.avatar_url, c.avatar_url),
      banner_url = coalesce(excluded.banner_url, c.banner_url),
      subscriber_count = coalesce(excluded.subscriber_count, c.subscriber_count),
      video_count = coalesce(excluded.video_count, c.video_count),
      country = coalesce(excluded.country, c.country),
      channel_status = case when ${channel.channelStatus ?? null}::text is null then c.channel_status else excluded.channel_status end`;
}
