import { SPEAKER_MARKER, type Cue } from './cue.ts';

// A cue that only repeats what is already on screen is a roll-up echo when it follows the previous
// cue within ECHO_GAP_MS and is either a "transition" of at most ECHO_MAX_MS (YouTube writes 10 ms
// ones) or the previous lines scrolling off. A longer repeat after a gap is somebody saying it again.
const ECHO_GAP_MS = 20;
const ECHO_MAX_MS = 50;

const MARKER = /^(?:>>\s*)+/;
const MESSY_SPACE = /[^\S ]| {2}/; // whitespace other than single spaces

/** The lines of a cue as they read: whitespace collapsed, empty lines gone. */
function visibleLines(text: string): string[] {
  const lines: string[] = [];
  for (const line of text.includes('\n') ? text.split('\n') : [text]) {
    // Most lines only need trimming; the regex replace is the slow path.
    const clean = MESSY_SPACE.test(line) ? line.replace(/\s+/g, ' ').trim() : line.trim();
    if (clean) lines.push(clean);
  }
  return lines;
}

/** How many lines at the start of `lines` repeat the last lines of `shown` (the most that fit). */
function overlap(shown: readonly string[], lines: readonly string[]): number {
  for (let k = Math.min(shown.length, lines.length); k > 0; k--) {
    let same = true;
    for (let j = 0; j < k && same; j++) same = shown[shown.length - k + j] === lines[j];
    if (same) return k;
  }
  return 0;
}

/** The cue as one line of text, a speaker change written as the marker it was read from. */
const line = (cue: Cue) => (cue.speakerChange ? `${SPEAKER_MARKER} ${cue.text}` : cue.text);

function isEcho(previous: Cue, cue: Cue, scrollsOff: boolean): boolean {
  const follows = Math.abs(cue.startMs - previous.endMs) <= ECHO_GAP_MS;
  return follows && (scrollsOff || cue.endMs - cue.startMs <= ECHO_MAX_MS);
}

/**
 * Turns cues as a codec read them into one line of new words per cue:
 * - roll-up captions (YouTube auto captions: each cue repeats the line before and adds one, with
 *   10 ms transition cues between) keep only the lines not already on screen, so every word comes
 *   once, in order;
 * - whitespace is collapsed and empty cues are dropped;
 * - a cue that says what the cue before it says, starting before that one ends (no pause between),
 *   merges into it: the first start, the last end;
 * - a line starting with ">>" is a new speaker: the marker goes, speakerChange is set and a
 *   "NAME:" label after it stays; such a line inside a cue starts a cue of its own (same times);
 * - cues are ordered by start time (stably); sound descriptions like [APPLAUSE] stay text.
 * Normalised cues come out of normaliseCues unchanged, and so out of render and parse.
 */
export function normaliseCues(input: readonly Cue[]): Cue[] {
  const sorted = input.every((cue, i) => i === 0 || input[i - 1]!.startMs <= cue.startMs);
  const cues = sorted ? input : [...input].sort((a, b) => a.startMs - b.startMs);
  const out: Cue[] = [];
  let shown: string[] = [];
  let previous: Cue | undefined;
  let pendingSpeaker = false;

  const emit = (startMs: number, endMs: number, text: string, speaker: boolean) => {
    if (!text) {
      pendingSpeaker ||= speaker; // a lone ">>": the change belongs to the words that follow
      return;
    }
    const cue: Cue = speaker || pendingSpeaker ? { startMs, endMs, text, speakerChange: true } : { startMs, endMs, text };
    // Checked on what comes out too, so that normalising normalised cues finds nothing to drop.
    const last = out.at(-1);
    if (last && line(last) === line(cue)) {
      if (isEcho(last, cue, false)) return;
      // The same words again with no pause between (older auto captions hold a line in a second cue
      // of its own): one cue from the first start to the last end. After a pause it is said again.
      if (cue.startMs <= last.endMs) {
        out[out.length - 1] = { ...last, endMs: Math.max(last.endMs, cue.endMs) };
        pendingSpeaker = false;
        return;
      }
    }
    pendingSpeaker = false;
    out.push(cue);
  };

  for (const cue of cues) {
    const lines = visibleLines(line(cue));
    if (lines.length === 0) continue;
    const timed = cue.endMs < cue.startMs ? { ...cue, endMs: cue.startMs } : cue;
    let repeated = overlap(shown, lines);
    // All of it is on screen already: a roll-up echo to skip, or else somebody saying it again.
    if (repeated === lines.length && !(previous && isEcho(previous, timed, shown.length > lines.length))) repeated = 0;
    shown = lines;
    previous = timed;

    // The new lines, joined, and cut where a ">>" starts one.
    let text = '';
    let speaker = false;
    for (let i = repeated; i < lines.length; i++) {
      const next = lines[i]!;
      const marker = next.startsWith('>>') ? MARKER.exec(next) : null;
      if (marker) {
        emit(timed.startMs, timed.endMs, text, speaker);
        text = '';
        speaker = true;
      }
      const words = marker ? next.slice(marker[0].length) : next;
      if (words) text = text ? `${text} ${words}` : words;
    }
    emit(timed.startMs, timed.endMs, text, speaker);
  }
  return out;
}
