/**
 * Words of speech that say nothing about a talk's subject and that stopwords-iso's lists (written for
 * text) lack: interjections, discourse markers, vague verbs, nouns and adjectives that spoken language
 * is full of ("hey", "stuff", "bring", "например", "видите"). They are no terms: never a tag, and no
 * weight in choosing which sentences to quote. Written by hand from real transcripts, for the
 * languages of the corpus; a language without a list has stopwords-iso's alone.
 */
const FILLER: Record<string, string> = {
  en:
    'hey yeah yep nope wow um uh hmm basically literally stuff lot lots bit time times guys sort gonna wanna gotta bring ' +
    'real love nice called talk talking pretty super amazing awesome cool fun started start day everybody everyone ' +
    "folks alright absolutely definitely totally honestly obviously exactly maybe kinda i'm you're we're they're that's it's " +
    "don't can't won't didn't doesn't isn't there's here's let's what's i've we've you've i'll we'll you'll i'd",
  ru:
    'например либо случае видите смотрите знаете понимаете давайте короче типа кстати собственно наверное допустим скажем ' +
    'одни одно одна одну итак немножко вещь вещи штука штуки образом говорю хотелось является являются привет здравствуйте друзья ребята ' +
    'ладно сейчас вообщем щас блин реально сразу всего всех',
  fr: 'ben truc trucs chose choses genre vraiment bonjour salut faire aller voir ouais bref carrément',
  es: 'vale cosa hola gracias realmente básicamente tipo bueno oye mira',
  de: 'halt naja okay genau sachen ding dinge hallo danke eigentlich einfach irgendwie sagen sehen',
};

const lists = new Map(Object.entries(FILLER).map(([language, words]) => [language, words.split(' ')]));

/** The filler words of `language` (ISO 639-1), empty when it has no list. */
export function fillerWords(language: string): readonly string[] {
  return lists.get(language) ?? [];
}
