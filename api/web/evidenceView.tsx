/** The video page's evidence: what each source answered, when, and a link to the raw answer (served as text). */
import type { VNode } from 'preact';
import type { ObservationRecord } from '../../core/evidence/observations.ts';
import { OBSERVATION_FILE, type metadataVersionsSchema, type SubtitleVersion } from '../../core/evidence/versions.ts';
import type { z } from 'zod';

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
  metadata_filled: 'the metadata kept',
  subtitle_version: 'a subtitle version',
};

/** A source's name inside a sentence: "from the yt-dlp archive", not "from The yt-dlp archive". */
const inSentence = (name: string) => name.replace(/^The /, 'the ');

const when = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** The Wayback capture an answer was read from, when it was one. */
const CaptureLink = ({ answer }: { answer: ObservationRecord }) =>
  answer.captureUrl ? (
    <>
      {' · '}
      <a href={answer.captureUrl} rel="noopener noreferrer">
        the capture
      </a>
    </>
  ) : null;

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
            <CaptureLink answer={answer} />
          </p>
        </li>
      ))}
    </ul>
  );
}

/** The kept answer a version names (observations/<id>.json), with its capture when it is the Wayback's; nothing when none was kept. */
function AnswerBehind({
  observation,
  answers,
  videoPath,
  words,
}: VersionProps & { observation: string | null; words: string }): VNode | null {
  const id = observation ? OBSERVATION_FILE.exec(observation)?.[1] : undefined;
  const answer = answers.find((kept) => kept.id === id);
  if (!answer) return null;
  return (
    <>
      {' · '}
      <a href={`${videoPath}/evidence/${answer.id}`}>{words}</a>{' '}
      <span class="muted">
        ({inSentence(SOURCE_NAMES[answer.source] ?? answer.source)}, <time dateTime={answer.observedAt}>{when(answer.observedAt)}</time>;{' '}
        {observation} in the bundle)
      </span>
      <CaptureLink answer={answer} />
    </>
  );
}

interface VersionProps {
  answers: readonly ObservationRecord[];
  videoPath: string;
}

/** The metadata and subtitle versions, each with the kept answer behind it. */
export function VersionEvidence({
  metadata,
  subtitles,
  ...props
}: VersionProps & { metadata: z.infer<typeof metadataVersionsSchema>; subtitles: readonly SubtitleVersion[] }): VNode | null {
  // The answer that made the newest version showed the current values too: listed with that version only.
  const named = metadata.current?.observation ?? null;
  const current = metadata.versions.some((version) => version.observation === named) ? null : named;
  if (metadata.versions.length === 0 && subtitles.length === 0 && !current) return null;
  return (
    <>
      <h3 class="versions-heading">Versions, and the answers they were read from</h3>
      <ul class="kept-answers versions">
        {current ? (
          <li>
            The title, description and tags shown were read from a kept answer
            <AnswerBehind observation={current} words="view the raw answer" {...props} />
          </li>
        ) : null}
        {metadata.versions.map((version) => (
          <li key={version.replacedAt}>
            <time dateTime={version.replacedAt}>{when(version.replacedAt)}</time> the title was <q>{version.title ?? 'unknown'}</q> until
            then
            <AnswerBehind observation={version.observation} words="the answer that showed the change" {...props} />
          </li>
        ))}
        {subtitles.map((version) => (
          <li key={version.file}>
            <time dateTime={version.fetchedAt}>{when(version.fetchedAt)}</time> {version.language} {version.kind} subtitles, version{' '}
            {version.version}, from {inSentence(SOURCE_NAMES[version.source] ?? version.source)}
            <AnswerBehind observation={version.observation} words="the file it was read from" {...props} />
          </li>
        ))}
      </ul>
    </>
  );
}
