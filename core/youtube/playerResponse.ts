/**
 * The player response a watch page embeds (videoDetails, playabilityStatus, captions, microformat),
 * and the formatted strings it and the page data write text in. The Wayback source, the caption
 * fetcher and the status probe all read watch pages through these.
 */
import { findAssignedObjects, findStringifiedObjects, parseObject } from './embeddedJson.ts';
import { asObject, asString, isObject, type JsonObject } from './json.ts';

/** Text of `{simpleText}`, `{runs: [{text}]}` or `{content}` (YouTube's formatted strings). */
export function formattedText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const object = asObject(value);
  if (!object) return undefined;
  if (typeof object.simpleText === 'string') return object.simpleText;
  if (typeof object.content === 'string') return object.content;
  if (Array.isArray(object.runs)) {
    const text = object.runs.map((run) => asString(asObject(run)?.text) ?? '').join('');
    return text || undefined;
  }
  return undefined;
}

/** `ytplayer.config` / `PLAYER_CONFIG` objects of 2012-2020 pages (their `args` hold the player's parameters). */
export function findPlayerConfigs(html: string): JsonObject[] {
  return [...findAssignedObjects(html, 'ytplayer\\.config'), ...findAssignedObjects(html, 'PLAYER_CONFIG')];
}

/** Player responses embedded in a page, in every form YouTube used. */
export function findPlayerResponses(html: string): JsonObject[] {
  const found = [...findAssignedObjects(html, 'ytInitialPlayerResponse')];
  for (const key of ['player_response', 'embedded_player_response', 'PLAYER_RESPONSE']) found.push(...findStringifiedObjects(html, key));
  for (const config of findPlayerConfigs(html)) {
    const args = asObject(config.args);
    for (const key of ['player_response', 'embedded_player_response']) {
      const object = parseObject(asString(args?.[key]));
      if (object) found.push(object);
    }
  }
  return found.filter((object) => isObject(object.videoDetails) || isObject(object.playabilityStatus));
}

/** What a player response's playabilityStatus says, each message as text (empty ones left out). */
export interface PlayabilityMessages {
  reason?: string;
  /** errorScreen.playerErrorMessageRenderer's reason and subreason. */
  errorReason?: string;
  errorSubreason?: string;
  messages: string[];
}

/** The messages of a playabilityStatus; callers join them in the order their reading needs. */
export function playabilityMessages(status: JsonObject): PlayabilityMessages {
  const text = (value: unknown) => formattedText(value) || undefined;
  const renderer = asObject(asObject(status.errorScreen)?.playerErrorMessageRenderer);
  const messages = (Array.isArray(status.messages) ? status.messages : [])
    .map(text)
    .filter((message): message is string => message !== undefined);
  return { reason: text(status.reason), errorReason: text(renderer?.reason), errorSubreason: text(renderer?.subreason), messages };
}

/** Whether a player response may be `videoId`'s: it names that video, or names none (error pages). */
export const isPlayerOf = (player: JsonObject, videoId: string): boolean => {
  const id = asObject(player.videoDetails)?.videoId;
  return id === undefined || id === videoId;
};
