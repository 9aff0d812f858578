import type { TrackInfo, TrackKind } from './tracks.ts';

/** Why no track fits a choice, naming the tracks there are: "no subtitles in en of kind manual; it has fr (auto)". */
export function noMatchingTrack(
  choice: { lang?: string | undefined; kind?: TrackKind | undefined; trackId?: string | undefined },
  tracks: readonly TrackInfo[],
): string {
  const wanted = [
    choice.lang ? `in ${choice.lang}` : '',
    choice.kind ? `of kind ${choice.kind}` : '',
    choice.trackId ? `with track id ${choice.trackId}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  const named = (track: TrackInfo) => (track.trackId ? `, track id ${track.trackId}` : '');
  return `no subtitles ${wanted}; it has ${tracks.map((track) => `${track.language} (${track.kind}${named(track)})`).join(', ')}`;
}
