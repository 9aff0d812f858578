/**
 * The summary of a transcript with no spoken words, only sound descriptions ([Music], (YAWNS)): it
 * says so, in English, and lists what is heard when. A valid summary rather than an error, because
 * "this video has no speech" is the true answer and retrying cannot change it.
 */
import type { TranscriptCue } from '../../subtitles/transcriptCue.ts';
import type { SummaryContent } from '../summary.ts';
import { clip } from './displayText.ts';
import { soundDescriptions } from '../../subtitles/stageDirections.ts';
import { timeSections } from './timeSections.ts';

const MAX_POINTS = 12;
const MAX_TAGS = 12;
const LISTED = 6;

const distinct = (items: readonly string[]) => [...new Set(items)];

export function soundOnlySummary(title: string | null, cues: readonly TranscriptCue[]): SummaryContent {
  // Repeats in a row ("[Music]" for every cue of a song) are one sound.
  const sounds = soundDescriptions(cues).filter((sound, i, all) => i === 0 || sound.text !== all[i - 1]!.text);
  if (sounds.length === 0) throw new Error('the transcript has no text at all: nothing to summarise');
  const step = Math.max(1, sounds.length / MAX_POINTS);
  const points = Array.from({ length: Math.min(MAX_POINTS, sounds.length) }, (_, k) => sounds[Math.floor(k * step)]!);
  const names = distinct(sounds.map((sound) => sound.text));
  const listed = `${names.slice(0, LISTED).join(', ')}${names.length > LISTED ? ', …' : ''}`;
  const sections = timeSections(cues.reduce((end, cue) => Math.max(end, cue.end), 0));
  const bySection = Array.from({ length: sections.count }, () => [] as string[]);
  for (const sound of sounds) bySection[sections.of(sound.start)]!.push(sound.text);
  const tags = distinct(
    names.map((name) =>
      name
        .replace(/[[\]()♩♪♫♬🎵🎶]/gu, ' ')
        .replace(/\s+/g, ' ')
        .trim()
        .toLowerCase(),
    ),
  );
  return {
    title: title?.trim() || clip(`No speech: ${listed}`, 100),
    tldr: `The transcript has no spoken words, only sound descriptions: ${listed}.`,
    keyPoints: points.map((sound) => ({ text: sound.text, startSeconds: Math.floor(sound.start) })),
    detailedSummary: bySection
      .flatMap((heard, i) => (heard.length ? [`${sections.label(i)}: ${distinct(heard).join(', ')}.`] : []))
      .join('\n\n'),
    tags: tags.filter((tag) => tag.length > 0 && tag.length <= 40).slice(0, MAX_TAGS),
    language: 'en',
  };
}
