import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { classifyPlayerResponse } from '../../core/status/observation.ts';
import { describeReal } from '../kit/describeReal.ts';
import { realFixture } from '../kit/realFixtures.ts';

// Real player responses from public repositories (SOURCES.md section 3 there), read in place.

const cases: Array<{ file: string; outcome: 'available' | 'gone' | 'transient'; reason?: string }> = [
  { file: 'youtube-transcript-api/youtube.innertube.json.static', outcome: 'available' },
  { file: 'youtube-transcript-api/youtube_transcripts_disabled.innertube.json.static', outcome: 'available' },
  { file: 'youtube-transcript-api/youtube_age_restricted.innertube.json.static', outcome: 'available' },
  { file: 'iv-org-mocks/scheduled_live_PBD-Podcast.player.json', outcome: 'available' },
  { file: 'iv-org-mocks/regular_mrbeast.player.json', outcome: 'available' },
  { file: 'youtube-transcript-api/youtube_video_unavailable.innertube.json.static', outcome: 'gone', reason: 'unknown' },
  { file: 'youtube-transcript-api/youtube_request_blocked.innertube.json.static', outcome: 'transient' },
  // status CUSTOM whose error screen is a bot check: never a deletion.
  { file: 'youtube-transcript-api/youtube_unplayable.innertube.json.static', outcome: 'transient' },
];

describeReal('status classification of real player responses', () => {
  it.each(cases)('$file reads as $outcome', ({ file, outcome, reason }) => {
    const player = JSON.parse(readFileSync(realFixture(file), 'utf8')) as Record<string, unknown>;
    const observation = classifyPlayerResponse('dQw4w9WgXcQ', player, file);
    expect(observation.outcome).toBe(outcome);
    if (reason) expect(observation).toMatchObject({ reason });
  });
});
