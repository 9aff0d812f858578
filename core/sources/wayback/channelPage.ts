/** Who an archived channel page (any layout, 2006 to now) is: channel id, names, title, description, avatar, or a termination notice. */
import { decodeEntities } from '../../text/entities.ts';
import { decodeURIComponentSafe } from '../../text/decodeUriComponentSafe.ts';
import { CHANNEL_ID } from '../../youtube/channelQuery.ts';
import { findAssignedObjects } from '../../youtube/embeddedJson.ts';
import { asObject, asString } from '../../youtube/json.ts';
import { bestThumbnail, cleanTitle, headTags, linkHref, metaValues, unwrapArchiveUrl } from './archivedPage.ts';

export interface ChannelPageInfo {
  channelId?: string;
  title?: string;
  description?: string;
  avatarUrl?: string;
  /** "@name" */
  handle?: string;
  /** The legacy username of youtube.com/user/NAME. */
  legacyUser?: string;
  /** NAME of youtube.com/c/NAME. */
  customName?: string;
  /** The page is a notice that the channel was terminated or does not exist. */
  terminated?: string;
}

const CHANNEL_NOTICE =
  /This account has been terminated[^<."]*|This channel (?:does not exist|is not available|was removed)[^<."]*|This account has been suspended[^<."]*|This user account has been (?:terminated|suspended|closed)[^<."]*/i;

function namesFromUrl(url: string | undefined, info: ChannelPageInfo): void {
  if (!url) return;
  const value = unwrapArchiveUrl(url);
  const handle = /youtube\.com\/(@[^/?#"&\s]+)/i.exec(value)?.[1];
  if (handle && !info.handle) info.handle = decodeURIComponentSafe(handle);
  const user = /youtube\.com\/user\/([^/?#"&\s]+)/i.exec(value)?.[1];
  if (user && !info.legacyUser) info.legacyUser = decodeURIComponentSafe(user);
  const custom = /youtube\.com\/c\/([^/?#"&\s]+)/i.exec(value)?.[1];
  if (custom && !info.customName) info.customName = decodeURIComponentSafe(custom);
  const id = /youtube\.com\/channel\/(UC[A-Za-z0-9_-]{22})(?![A-Za-z0-9_-])/.exec(value)?.[1];
  if (id && !info.channelId) info.channelId = id;
}

/** Channel id, names, title, description and avatar of an archived channel page (any layout). */
export function extractChannelInfo(html: string): ChannelPageInfo {
  const info: ChannelPageInfo = {};
  const data = findAssignedObjects(html, 'ytInitialData')[0];
  const metadata = asObject(asObject(data?.metadata)?.channelMetadataRenderer);
  if (metadata) {
    const id = asString(metadata.externalId);
    if (id && CHANNEL_ID.test(id)) info.channelId = id;
    const title = asString(metadata.title);
    if (title) info.title = title;
    const description = asString(metadata.description);
    if (description !== undefined) info.description = description;
    const avatar = bestThumbnail(metadata.avatar);
    if (avatar) info.avatarUrl = avatar;
    namesFromUrl(asString(metadata.vanityChannelUrl), info);
    if (Array.isArray(metadata.ownerUrls)) for (const url of metadata.ownerUrls) namesFromUrl(asString(url), info);
    namesFromUrl(asString(metadata.channelUrl), info);
  }
  const header = asObject(asObject(data?.header)?.c4TabbedHeaderRenderer);
  if (header) {
    const id = asString(header.channelId);
    if (!info.channelId && id && CHANNEL_ID.test(id)) info.channelId = id;
    if (!info.title) info.title = asString(header.title);
    if (!info.avatarUrl) info.avatarUrl = bestThumbnail(header.avatar);
  }
  const tags = headTags(html);
  const metaId = metaValues(tags, 'itemprop', 'channelid')[0];
  if (!info.channelId && metaId && CHANNEL_ID.test(metaId)) info.channelId = metaId;
  if (!info.channelId) {
    const attr = /data-channel-external-id="(UC[A-Za-z0-9_-]{22})"/.exec(html)?.[1];
    if (attr) info.channelId = attr;
  }
  namesFromUrl(linkHref(tags, 'rel', 'canonical'), info);
  namesFromUrl(metaValues(tags, 'property', 'og:url')[0], info);
  if (!info.channelId) {
    const json = /"(?:externalId|channelId|ucid)"\s*:\s*"(UC[A-Za-z0-9_-]{22})"/.exec(html)?.[1];
    if (json) info.channelId = json;
  }
  info.title ??=
    cleanTitle(metaValues(tags, 'property', 'og:title')[0]) ??
    cleanTitle(metaValues(tags, 'name', 'title')[0]) ??
    cleanTitle(/<title>([\s\S]*?)<\/title>/i.exec(html)?.[1]);
  if (info.description === undefined) {
    const description = metaValues(tags, 'property', 'og:description')[0] ?? metaValues(tags, 'name', 'description')[0];
    if (description !== undefined) info.description = description;
  }
  if (!info.avatarUrl) {
    const image =
      metaValues(tags, 'property', 'og:image')[0] ?? linkHref(tags, 'itemprop', 'thumbnailurl') ?? linkHref(tags, 'rel', 'image_src');
    if (image) info.avatarUrl = unwrapArchiveUrl(image);
  }
  if (!info.channelId) {
    const notice = CHANNEL_NOTICE.exec(html)?.[0];
    if (notice) info.terminated = decodeEntities(notice).trim();
  }
  for (const key of Object.keys(info) as Array<keyof ChannelPageInfo>) if (info[key] === undefined) delete info[key];
  return info;
}
