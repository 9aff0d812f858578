/** Sixteen plain nouns for made-up talks in the LLM tests: a period of 16 so that no caption repeats the one before (roll-up). */
export const TALK_WORDS = [
  'archive',
  'signal',
  'river',
  'engine',
  'garden',
  'theory',
  'market',
  'window',
  'planet',
  'language',
  'memory',
  'circuit',
  'harbour',
  'pattern',
  'village',
  'crystal',
];
