/**
 * The words of the synthetic corpus: real trending-video metadata (English, French, Russian; the
 * trending-datasets folder of the real fixtures) when that folder exists, else a small built-in list,
 * ranked by frequency, with a long tail of made-up rare words, plus a few Japanese and other CJK words.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isCjkToken, tokenize } from '../../core/fts/query.ts';
import { zipfCdf } from './random.ts';
import { realFixture } from './realFixtures.ts';

export const TRENDING_DIR = realFixture('trending-datasets');

export type Language = 'en' | 'fr' | 'ru' | 'ja';
export const LANGUAGES: Language[] = ['en', 'fr', 'ru', 'ja'];
const SOURCES: Array<{ language: Language; file: string }> = [
  { language: 'en', file: 'karanmurthy7/USvideos.csv' },
  { language: 'fr', file: 'karanmurthy7/FRvideos.csv' },
  { language: 'ru', file: 'mdilin/RU_youtube_trending_data.csv' },
];

/** Made-up words per language beyond the real vocabulary: the rare tail (names, typos, codes). */
const TAIL_WORDS = 500_000;
const ZIPF_EXPONENT = 1.2;
const ZIPF_OFFSET = 2.7;
const MAX_TAGS_PER_LANGUAGE = 5_000;

interface Vocabulary {
  language: Language;
  /** Surface forms by rank, most frequent first; ranks past the end are made-up words. */
  words: string[];
  /** Token id of each real word, by rank. */
  wordIds: Int32Array;
  /** First token id of the made-up tail (rank words.length). */
  tailBase: number;
  cdf: Float64Array;
  tags: string[];
  tagIds: Int32Array[];
  tagCdf: Float64Array;
}

/** RFC 4180 with leniency: a quote inside a quoted field that does not end it is kept (the `"a"|"b"` tag lists). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  const endsField = (at: number) => at >= text.length || text[at] === ',' || text[at] === '\n' || text[at] === '\r';
  while (i <= text.length) {
    let field = '';
    if (text[i] === '"') {
      for (let from = i + 1; ; ) {
        const quote = text.indexOf('"', from);
        if (quote < 0) {
          field += text.slice(from);
          i = text.length;
          break;
        }
        field += text.slice(from, quote);
        if (text[quote + 1] === '"') {
          field += '"';
          from = quote + 2;
        } else if (endsField(quote + 1)) {
          i = quote + 1;
          break;
        } else {
          field += '"';
          from = quote + 1;
        }
      }
    } else {
      let end = i;
      while (!endsField(end)) end++;
      field = text.slice(i, end);
      i = end;
    }
    row.push(field);
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text[i] === '\r' && text[i + 1] === '\n') i++;
    i++;
    if (row.length > 1 || row[0] !== '') rows.push(row);
    row = [];
  }
  return rows;
}

interface RawText {
  titles: string[];
  descriptions: string[];
  tags: string[][];
}

function readTrending(file: string): RawText {
  const [header, ...rows] = parseCsv(readFileSync(file, 'utf8'));
  const column = (name: string) => header!.indexOf(name);
  const [id, title, tags, description] = ['video_id', 'title', 'tags', 'description'].map(column) as [number, number, number, number];
  const seen = new Set<string>();
  const raw: RawText = { titles: [], descriptions: [], tags: [] };
  for (const row of rows) {
    if (row.length < header!.length || seen.has(row[id]!)) continue;
    seen.add(row[id]!);
    raw.titles.push(row[title]!);
    // The Kaggle exports escape newlines as a backslash and n.
    raw.descriptions.push(row[description]!.replaceAll('\\n', '\n'));
    raw.tags.push(
      row[tags]!.split('|')
        .map((tag) => tag.replaceAll('"', '').trim())
        .filter((tag) => tag.length >= 2 && tag.length <= 40 && tag !== '[none]'),
    );
  }
  return raw;
}

const BUILT_IN: Record<Exclude<Language, 'ja'>, string> = {
  en: 'the of and to a in is you that it for on with this video my how new we be are your not at all from have what can official music one more live game best will do by top day about out get like full first life world 2024 episode part time make season news trailer vs review first love world how best cooking travel guide food car house funny challenge reaction tutorial highlights interview song remix cover football basketball minecraft fortnite family kids science history space space war truth story night city summer winter christmas',
  fr: 'de la le et les des en un une du pour est pas que sur dans qui au avec ce il vous je on plus nous sont par mais vidéo nouvelle officiel musique jeu meilleur jour tout fait faire premier monde vie amour histoire cuisine voyage recette voiture maison drôle défi réaction tutoriel football clip chanson épisode saison bande annonce français paris été hiver noël famille enfants science guerre vérité soirée ville',
  ru: 'и в не на я что с он как это по но все так из за вы у мы то же для от видео новый клип официальный музыка игра лучший день мир жизнь любовь история кухня путешествие рецепт машина дом смешной челлендж реакция обзор футбол песня серия сезон трейлер русский москва лето зима новый год семья дети наука война правда ночь город',
};
const CJK_WORDS =
  '東京 日本 動画 料理 猫 犬 旅行 音楽 ゲーム 実況 配信 映画 新作 公式 予告 最新 ニュース 北京 上海 中国 美食 教程 生活 日常 歌 カバー 踊って みた 初心者 解説 攻略 桜 夏 冬 祭り 夜景 電車 ラーメン 寿司 カレー 野球 サッカー 試合 ライブ 東京タワー 富士山 京都 大阪 韓国 아이돌 노래 먹방 여행'.split(
    ' ',
  );

/** Token ids shared by every language: one per distinct folded token. */
function tokenTable() {
  const ids = new Map<string, number>();
  const tokens: string[] = [];
  return {
    tokens,
    id(token: string): number {
      let id = ids.get(token);
      if (id === undefined) {
        id = tokens.length;
        ids.set(token, id);
        tokens.push(token);
      }
      return id;
    },
    has: (token: string) => ids.has(token),
  };
}
type TokenTable = ReturnType<typeof tokenTable>;

const WORD = /[\p{L}\p{N}]+/gu;

function buildVocabulary(language: Exclude<Language, 'ja'>, raw: RawText, table: TokenTable): Omit<Vocabulary, 'tailBase' | 'cdf'> {
  const counts = new Map<string, number>();
  const surfaces = new Map<string, Map<string, number>>();
  const tokenOf = new Map<string, string | null>();
  const count = (text: string) => {
    for (const surface of text.match(WORD) ?? []) {
      let token = tokenOf.get(surface);
      if (token === undefined) {
        const tokens = tokenize(surface);
        token = tokens.length !== 1 || isCjkToken(tokens[0]!) || tokens[0]!.length > 24 ? null : tokens[0]!;
        tokenOf.set(surface, token);
      }
      if (token === null) continue;
      counts.set(token, (counts.get(token) ?? 0) + 1);
      let forms = surfaces.get(token);
      if (!forms) surfaces.set(token, (forms = new Map()));
      forms.set(surface, (forms.get(surface) ?? 0) + 1);
    }
  };
  const tagCounts = new Map<string, number>();
  raw.titles.forEach(count);
  raw.descriptions.forEach(count);
  for (const tags of raw.tags) {
    for (const tag of tags) {
      count(tag);
      tagCounts.set(tag, (tagCounts.get(tag) ?? 0) + 1);
    }
  }
  // Ties keep the order of first appearance (a stable sort of the maps' insertion order).
  const byCount = <T>(map: Map<T, number>) => [...map].sort((a, b) => b[1] - a[1]).map(([key]) => key);
  const ranked = byCount(counts);
  const words = ranked.map((token) => byCount(surfaces.get(token)!)[0]!);
  const wordIds = Int32Array.from(ranked, (token) => table.id(token));
  const tags = byCount(tagCounts)
    .filter((tag) => tokenize(tag).length > 0)
    .slice(0, MAX_TAGS_PER_LANGUAGE);
  return {
    language,
    words,
    wordIds,
    tags,
    tagIds: tags.map((tag) => Int32Array.from(tokenize(tag), (token) => table.id(token))),
    tagCdf: zipfCdf(tags.length, 1, ZIPF_OFFSET),
  };
}

const SYLLABLES: Record<Exclude<Language, 'ja'>, string[]> = {
  en: 'ba be bi bo bu da de di do du fa fe fi fo ga go ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po ra re ri ro ru sa se si so ta te ti to tu va vo za zo'.split(
    ' ',
  ),
  fr: 'ba be bi bo da de di do fa fe fi fo ga gi go la le li lo lu ma me mi mo mu na ne ni no pa pe pi po ra re ri ro sa se si so ta te ti to va ve vi vo'.split(
    ' ',
  ),
  ru: 'ба бе би бо бу ва ве ви во га го да де ди до ду за зи ка ке ки ко ку ла ле ли ло лу ма ме ми мо му на не ни но ну па пе пи по ра ре ри ро ру са се си со та те ти то ту'.split(
    ' ',
  ),
};
/** French made-up words end in "x", so they never equal an English one (even length, ending in a vowel). */
const TAIL_SUFFIX: Record<Exclude<Language, 'ja'>, string> = { en: '', fr: 'x', ru: '' };

/** The made-up word of tail rank `rank`: three to five syllables, uniquely decodable. */
function tailWord(language: Exclude<Language, 'ja'>, rank: number, table: TokenTable): string {
  const syllables = SYLLABLES[language];
  let word = '';
  let n = rank + syllables.length ** 2;
  do {
    word += syllables[n % syllables.length];
    n = Math.floor(n / syllables.length);
  } while (n > 0);
  word += TAIL_SUFFIX[language];
  // A made-up word that happens to be a real one gets a letter no tail word ends in.
  return table.has(word) ? `${word}${language === 'ru' ? 'ъ' : 'q'}` : word;
}

export function loadVocabulary(directory: string | null = TRENDING_DIR) {
  const table = tokenTable();
  const available = directory !== null && SOURCES.every((source) => existsSync(join(directory, source.file)));
  const vocabularies = {} as Record<Exclude<Language, 'ja'>, Vocabulary>;
  for (const { language, file } of SOURCES) {
    const lang = language as Exclude<Language, 'ja'>;
    // The built-in lists are in rough order of frequency: each word once.
    const builtIn = [...new Set(BUILT_IN[lang].split(' '))];
    const raw: RawText = available
      ? readTrending(join(directory!, file))
      : { titles: [builtIn.join(' ')], descriptions: [], tags: builtIn.map((word) => [word]) };
    vocabularies[lang] = { ...buildVocabulary(lang, raw, table), tailBase: 0, cdf: new Float64Array() };
  }
  const cjk = CJK_WORDS.map((word) => Int32Array.from(tokenize(word), (token) => table.id(token)));
  // Made-up words are made when drawn; their ids come after every real token, per language.
  const tailLanguages = ['en', 'fr', 'ru'] as const;
  const realTokens = table.tokens.length;
  tailLanguages.forEach((language, index) => {
    const vocabulary = vocabularies[language];
    vocabulary.tailBase = realTokens + index * TAIL_WORDS;
    vocabulary.cdf = zipfCdf(vocabulary.words.length + TAIL_WORDS, ZIPF_EXPONENT, ZIPF_OFFSET);
  });
  const token = (id: number): string => {
    if (id < realTokens) return table.tokens[id]!;
    const tail = id - realTokens;
    return tailWord(tailLanguages[Math.floor(tail / TAIL_WORDS)]!, tail % TAIL_WORDS, table);
  };
  return {
    source: available ? ('trending-datasets' as const) : ('built-in' as const),
    files: available ? SOURCES.map((source) => source.file) : [],
    vocabularies,
    cjk: { words: CJK_WORDS, ids: cjk, cdf: zipfCdf(CJK_WORDS.length, 1, 1) },
    token,
    tokenCount: realTokens + tailLanguages.length * TAIL_WORDS,
  };
}
