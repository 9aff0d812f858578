import { describe, expect, it } from 'vitest';
import { classifyPlayerResponse } from '../../core/status/observation.ts';

const player = (status: string, reason: string, subreason?: string) => ({
  playabilityStatus: {
    status,
    reason,
    ...(subreason
      ? { errorScreen: { playerErrorMessageRenderer: { reason: { simpleText: reason }, subreason: { runs: [{ text: subreason }] } } } }
      : {}),
  },
});
const classify = (p: Record<string, unknown>) => classifyPlayerResponse('dQw4w9WgXcQ', p, 'test');

describe('classifyPlayerResponse', () => {
  it.each([
    ['This video has been removed by the uploader', 'removed_by_uploader'],
    ["This video has been removed for violating YouTube's Terms of Service", 'terms_of_service'],
    ["This video has been removed for violating YouTube's Community Guidelines", 'terms_of_service'],
    ['This video is no longer available because the YouTube account associated with this video has been terminated.', 'account_terminated'],
    ['The uploader has not made this video available in your country', 'blocked_in_region'],
    ['This video is unavailable', 'unknown'],
  ])('"%s" is gone: %s', (message, reason) => {
    expect(classify(player('ERROR', 'Video unavailable', message))).toMatchObject({ outcome: 'gone', reason });
  });

  it('names the copyright claimant in either wording', () => {
    expect(
      classify(
        player('ERROR', 'Video unavailable', 'This video is no longer available due to a copyright claim by Sony Music Entertainment'),
      ),
    ).toMatchObject({
      reason: 'copyright',
      claimant: 'Sony Music Entertainment',
    });
    expect(
      classify(player('UNPLAYABLE', 'Video unavailable', 'This video contains content from WMG, who has blocked it on copyright grounds.')),
    ).toMatchObject({ reason: 'copyright', claimant: 'WMG' });
  });

  it('reads a private video as gone (private), an age gate and an upcoming stream as available', () => {
    expect(classify(player('LOGIN_REQUIRED', 'This video is private'))).toMatchObject({ outcome: 'gone', reason: 'private' });
    expect(classify(player('LOGIN_REQUIRED', 'Sign in to confirm your age'))).toMatchObject({ outcome: 'available' });
    expect(classify(player('LIVE_STREAM_OFFLINE', 'This live event will begin in 18 hours.'))).toMatchObject({ outcome: 'available' });
  });

  it('never reads a bot check, "try again later" or an unknown answer as gone', () => {
    expect(classify(player('LOGIN_REQUIRED', 'Sign in to confirm you’re not a bot'))).toMatchObject({ outcome: 'transient' });
    expect(classify(player('ERROR', 'Something went wrong. Please try again later.'))).toMatchObject({ outcome: 'transient' });
    expect(classify(player('ERROR', ''))).toMatchObject({ outcome: 'transient' });
    expect(classify({})).toMatchObject({ outcome: 'transient' });
  });
});
