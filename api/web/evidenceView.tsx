/** The video page's evidence: what each source answered, when, and a link to the raw answer (served as text). */
import type { VNode } from 'preact';
import type { ObservationRecord } from '../../core/evidence/observations.ts';

const SOURCE_NAMES: Record<string, string> = {
  youtube_api: 'The YouTube Data API',
  watch_page: "YouTube's watch page",
  yt_dlp: 'yt-dlp',
  wayback: 'The Wayback Machine',
  youtube: "YouTube's caption tracks",
  archive: 'The yt-dlp archive',
};
const DECIDED: Record<ObservationRecord['decided'], string> = {
  suspected: 'first sign',
  status_change: 'changed the status',
  confirmation: 'confirmed it again',
  thumbnail: 'the thumbnail kept',
  metadata_version: 'showed new metadata',
  subtitle_version: 'a subtitle version',
};

const when = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** The answers kept for one history entry (or the confirmations after it), oldest first. */
export function KeptAnswers({ answers, videoPath }: { answers: readonly ObservationRecord[]; videoPath: string }): VNode {
  return (
    <ul class="kept-answers">
      {answers.map((answer) => (
        <li key={answer.id}>
          <p>
            <time dateTime={answer.observedAt}>{when(answer.observedAt)}</time> {SOURCE_NAMES[answer.source] ?? answer.source} said
            <span class="muted"> ({DECIDED[answer.decided]})</span>: <q class="evidence">{answer.said}</q>
          </p>
          <p class="evidence">
            {answer.httpStatus === null ? '' : `HTTP ${answer.httpStatus}, `}
            {answer.bodySize.toLocaleString('en')} bytes, SHA-256 <code>{answer.bodySha256.slice(0, 16)}…</code> ·{' '}
            <a href={`${videoPath}/evidence/${answer.id}`}>view the raw answer</a>
            {answer.captureUrl ? (
              <>
                {' · '}
                <a href={answer.captureUrl} rel="noopener noreferrer">
                  the capture
                </a>
              </>
            ) : null}
          </p>
        </li>
      ))}
    </ul>
  );
}
