/**
 * The video cut into 3-8 equal time sections (about one per five minutes, whole minutes when a
 * section is a minute or longer): the detailed summary's paragraphs, and what spreads the key points.
 */
import { clock } from '../../text/clock.ts';

const MIN_SECTIONS = 3;
const MAX_SECTIONS = 8;
const MINUTES_PER_SECTION = 5;

export interface TimeSections {
  /** Seconds each section lasts. */
  length: number;
  count: number;
  /** The section `seconds` falls in. */
  of(seconds: number): number;
  /** "0:00–4:59", the last one ending at the end of the video. */
  label(section: number): string;
}

export function timeSections(durationSeconds: number): TimeSections {
  const duration = Math.max(1, durationSeconds);
  const wanted = Math.min(MAX_SECTIONS, Math.max(MIN_SECTIONS, Math.round(duration / 60 / MINUTES_PER_SECTION)));
  const raw = duration / wanted;
  const length = raw >= 60 ? Math.ceil(raw / 60) * 60 : Math.max(10, Math.ceil(raw / 10) * 10);
  const count = Math.max(1, Math.ceil(duration / length));
  return {
    length,
    count,
    of: (seconds) => Math.min(count - 1, Math.max(0, Math.floor(seconds / length))),
    label: (section) => {
      const end = section === count - 1 ? duration : (section + 1) * length - 1;
      return `${clock(section * length)}–${clock(end)}`;
    },
  };
}
