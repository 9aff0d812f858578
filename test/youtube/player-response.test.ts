import { describe, expect, it } from 'vitest';
import { findPlayerResponses, formattedText, isPlayerOf } from '../../core/youtube/playerResponse.ts';

describe('player responses', () => {
  const player = { videoDetails: { videoId: 'dQw4w9WgXcQ', title: 'x' }, playabilityStatus: { status: 'OK' } };

  it('are found assigned, stringified and in ytplayer.config args', () => {
    const assigned = `<script>var ytInitialPlayerResponse = ${JSON.stringify(player)};</script>`;
    const stringified = `<script>{"player_response":${JSON.stringify(JSON.stringify(player))}}</script>`;
    const config = `<script>ytplayer.config = ${JSON.stringify({ args: { player_response: JSON.stringify(player) } })};</script>`;
    expect(findPlayerResponses(assigned)).toEqual([player]);
    expect(findPlayerResponses(stringified)).toEqual([player]);
    // The args' player_response is also a stringified object: the same response may be found twice.
    expect(findPlayerResponses(config)).toEqual([player, player]);
    expect(findPlayerResponses('<script>var ytInitialPlayerResponse = {"responseContext": {}};</script>')).toEqual([]);
  });

  it('belong to a video when they name it or name none', () => {
    expect(isPlayerOf(player, 'dQw4w9WgXcQ')).toBe(true);
    expect(isPlayerOf(player, 'aaaaaaaaaaa')).toBe(false);
    expect(isPlayerOf({ playabilityStatus: { status: 'ERROR' } }, 'aaaaaaaaaaa')).toBe(true);
  });

  it('formatted text reads simpleText, runs and content', () => {
    expect(formattedText({ simpleText: 'a' })).toBe('a');
    expect(formattedText({ runs: [{ text: 'a' }, { text: 'b' }] })).toBe('ab');
    expect(formattedText({ content: 'c' })).toBe('c');
    expect(formattedText('s')).toBe('s');
    expect(formattedText({ runs: [] })).toBeUndefined();
    expect(formattedText(3)).toBeUndefined();
  });
});
