/**
 * Who speaks each turn, as far as captions tell. A label names its speaker, and the same name
 * (whatever its case or spacing) is one speaker, written as it was first written.
 *
 * A turn without a name (">>", a dialogue dash) says only that the speaker changed, never to whom.
 * The rule is the fewest voices that fit: an unnamed turn goes to the unnamed speaker who spoke last
 * and is not the one speaking now, and only when there is none does a new number start. So an
 * unnamed dialogue alternates Speaker 1 and Speaker 2, there are never more than two numbered
 * speakers, and words before any turn are Speaker 1. A panel of three unnamed voices is written as
 * two alternating labels: the numbers mark where turns change, they do not identify anybody.
 * Captions with no turns at all are one Speaker 1: no alternation is invented.
 */

export interface SpeakerLabeller {
  /** The speaker of the next speech: `turn` when a marker or label opened it, `name` when a label named it. */
  next(turn: boolean, name: string | null): string;
  /** Who spoke last, or null before anyone has. */
  readonly current: string | null;
}

const key = (name: string) => name.replace(/\s+/g, ' ').trim().toLowerCase();

export function speakerLabeller(): SpeakerLabeller {
  const named = new Map<string, string>();
  // Unnamed speakers' labels, the one who spoke last first.
  const unnamed: string[] = [];
  let current: string | null = null;

  const numbered = (): string => {
    const label = unnamed.find((candidate) => candidate !== current) ?? `Speaker ${unnamed.length + 1}`;
    const at = unnamed.indexOf(label);
    if (at >= 0) unnamed.splice(at, 1);
    unnamed.unshift(label);
    return label;
  };

  return {
    next(turn, name) {
      if (name) {
        const found = named.get(key(name)) ?? name.replace(/\s+/g, ' ').trim();
        named.set(key(name), found);
        current = found;
      } else if (turn || current === null) {
        current = numbered();
      }
      return current;
    },
    get current() {
      return current;
    },
  };
}
