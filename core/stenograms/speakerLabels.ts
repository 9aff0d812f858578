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
 * Captions with no turns at all are one Speaker 1: no alternation is invented. The word "Speaker" is
 * written in the transcript's language ("Спикер 2", "Intervenant 1"), English where we have none.
 */

// What transcripts in each language call a voice they cannot name.
const UNNAMED: Record<string, string> = {
  en: 'Speaker',
  ru: 'Спикер',
  uk: 'Спікер',
  fr: 'Intervenant',
  es: 'Hablante',
  de: 'Sprecher',
  it: 'Oratore',
  pt: 'Orador',
  nl: 'Spreker',
  pl: 'Mówca',
  sv: 'Talare',
  tr: 'Konuşmacı',
  ja: '話者',
  zh: '发言人',
  ko: '화자',
};

/** The label of the `n`th unnamed speaker in `language` (ISO 639-1). */
const unnamedSpeaker = (language: string, n: number): string => `${UNNAMED[language] ?? 'Speaker'} ${n}`;

/** N of "Speaker N" (as a model is asked to write) or of the label in `language`; null for any other label. */
function speakerNumber(label: string, language: string): number | null {
  const numbered = /^(\p{L}+) ([1-9]\d?)$/u.exec(label);
  if (!numbered) return null;
  const word = numbered[1]!.toLowerCase();
  return word === 'speaker' || word === (UNNAMED[language] ?? 'Speaker').toLowerCase() ? Number(numbered[2]) : null;
}

/** Whether `label` is a numbered speaker's, in English or in `language`. */
export const isNumberedSpeaker = (label: string, language: string): boolean => speakerNumber(label, language) !== null;

/** A numbered speaker's label in `language` ("Speaker 2" → "Спикер 2"); any other label as it is. */
export function inLanguage(label: string, language: string): string {
  const n = speakerNumber(label, language);
  return n === null ? label : unnamedSpeaker(language, n);
}

export interface SpeakerLabeller {
  /** The speaker of the next speech: `turn` when a marker or label opened it, `name` when a label named it. */
  next(turn: boolean, name: string | null): string;
  /** Who spoke last, or null before anyone has. */
  readonly current: string | null;
}

const key = (name: string) => name.replace(/\s+/g, ' ').trim().toLowerCase();

export function speakerLabeller(language: string): SpeakerLabeller {
  const named = new Map<string, string>();
  // Unnamed speakers' labels, the one who spoke last first.
  const unnamed: string[] = [];
  let current: string | null = null;

  const numbered = (): string => {
    const label = unnamed.find((candidate) => candidate !== current) ?? unnamedSpeaker(language, unnamed.length + 1);
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
