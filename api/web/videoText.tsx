import type { VNode } from 'preact';

/** A chapter's time at a line's start: m:ss or h:mm:ss. */
const CHAPTER = /^(\s*)((?:(\d{1,2}):)?(\d{1,2}):(\d{2}))(?=\s|$)/;
const URL_PATTERN = /https?:\/\/[^\s<>"]+[^\s<>".,;:!?)\]'"]/g;

/** The seconds of a chapter's "1:02:03" or "2:03". */
function chapterSeconds(hours: string | undefined, minutes: string, seconds: string): number {
  return Number(hours ?? 0) * 3600 + Number(minutes) * 60 + Number(seconds);
}

/** A line's URLs as links that pass no ranking and no opener: the description is the uploader's text, not ours. */
function withLinks(text: string): Array<string | VNode> {
  const parts: Array<string | VNode> = [];
  let last = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    parts.push(text.slice(last, match.index));
    parts.push(
      <a href={match[0]} rel="nofollow noopener ugc" class="external">
        {match[0]}
      </a>,
    );
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return parts;
}

/** A video's description with its chapter times linking to that moment (`?t=N#player`) and its URLs as external links. */
export function LinkedDescription({ text }: { text: string }): VNode {
  return (
    <p>
      {text.split('\n').map((line, index) => {
        const chapter = CHAPTER.exec(line);
        const head = chapter ? (
          <>
            {chapter[1]}
            <a href={`?t=${chapterSeconds(chapter[3], chapter[4]!, chapter[5]!)}#player`} class="chapter">
              {chapter[2]}
            </a>
          </>
        ) : null;
        return (
          <>
            {index ? '\n' : ''}
            {head}
            {withLinks(chapter ? line.slice(chapter[0].length) : line)}
          </>
        );
      })}
    </p>
  );
}

const percent = (share: number) => `${Math.round(share * 100)} %`;

/** A re-upload match's details in words: "title 85 % alike, durations 3 s apart, transcript 70 % alike". */
function matchInWords(details: Record<string, unknown>): string {
  const words: string[] = [];
  if (typeof details.titleSimilarity === 'number') words.push(`title ${percent(details.titleSimilarity)} alike`);
  if (typeof details.durationDeltaSeconds === 'number')
    words.push(details.durationDeltaSeconds === 0 ? 'same duration' : `durations ${details.durationDeltaSeconds} s apart`);
  if (typeof details.transcriptSimilarity === 'number') words.push(`transcript ${percent(details.transcriptSimilarity)} alike`);
  return words.join(', ');
}

const REUPLOAD_MATCH = /^re-uploaded as \S+ \(score ([\d.]+): (\{.*\})\)$/;

/**
 * What a probe or source saw, for reading: a confirmation's "<first sighting> | then: <second>" once per
 * distinct message, a re-upload match's JSON as words. The API keeps the raw text.
 */
export function readableEvidence(evidence: string): string[] {
  const distinct = [...new Set(evidence.split(' | then: ').map((part) => part.trim()))].filter(Boolean);
  return distinct.map((part) => {
    const match = REUPLOAD_MATCH.exec(part);
    if (!match) return part;
    try {
      const details = JSON.parse(match[2]!) as Record<string, unknown>;
      return `A re-upload match (${percent(Number(match[1]))} sure): ${matchInWords(details)}`;
    } catch {
      return part;
    }
  });
}
