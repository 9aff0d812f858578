import type { TrackInfo, TrackKind } from './tracks.ts';

/** Why no track fits a choice, naming the tracks there are: "no subtitles in en of kind manual; it has fr (auto)". */
export function noMatchingTrack(choice: { lang?: string | undefined; kind?: TrackKind | undefined }, tracks: readonly TrackInfo[]): string {
  const wanted = [choice.lang ? `in ${choice.lang}` : '', choice.kind ? `of kind ${choice.kind}` : ''].filter(Boolean).join(' ');
  return `no subtitles ${wanted}; it has ${tracks.map((track) => `${track.language} (${track.kind})`).join(', ')}`;
}
