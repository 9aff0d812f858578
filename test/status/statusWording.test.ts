import { describe, expect, it } from 'vitest';
import { describeStatus, REASON_TEXT, reasonText } from '../../core/videos/statusWording.ts';
import { statusReason } from '../../core/videos/videoStatus.ts';
import { readableEvidence } from '../../api/web/videoText.tsx';

describe('the status wording', () => {
  it('words every reason once, and a badge is the status word and that reason', () => {
    expect(Object.keys(REASON_TEXT).sort()).toEqual([...statusReason.options].sort());
    for (const reason of statusReason.options) {
      expect(describeStatus('deleted', reason)).toBe(`Deleted: ${reasonText(reason)}`);
      expect(describeStatus('re-uploaded', reason)).toBe(`Re-uploaded: ${reasonText(reason)}`);
    }
    expect(describeStatus('deleted', 'terms_of_service')).toBe('Deleted: removed for breaking the terms of service');
    expect(describeStatus('live', 'copyright')).toBe('Live');
    expect(describeStatus('deleted', null)).toBe('Deleted');
  });

  it('shows evidence once per distinct message, and a re-upload match in words', () => {
    expect(readableEvidence('Video unavailable | then: Video unavailable')).toEqual(['Video unavailable']);
    expect(readableEvidence('This video is private | then: Video unavailable')).toEqual(['This video is private', 'Video unavailable']);
    expect(
      readableEvidence(
        're-uploaded as abcdefghijk (score 0.9: {"titleSimilarity":0.846,"durationDeltaSeconds":2,"transcriptSimilarity":null})',
      ),
    ).toEqual(['A re-upload match (90 % sure): title 85 % alike, durations 2 s apart']);
  });
});
