/**
 * A deterministic synthetic archive for benchmarks: channels and videos whose words come from real
 * trending-video metadata (English, French, Russian; ../shared/fixtures/real/trending-datasets) when
 * that folder exists, else from a small built-in list, drawn with Zipf-like frequencies and a long tail
 * of made-up rare words. Video i of a seed is the same whatever the corpus size or batch order.
 *
 * Also: the fast path that writes a corpus into the videos table (multi-row INSERTs, every index and
 * trigger in place), and the query mix of the full-text benchmark, chosen from the corpus's own word frequencies.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Sql } from '../../core/db/database.ts';
import { AppError } from '../../core/errors.ts';
import type { FtsFilters } from '../../core/fts/backend.ts';
import { isCjkToken, tokenize } from '../../core/fts/query.ts';
import { repoRoot } from './lib/harness.ts';
import { random } from './random.ts';

export const TRENDING_DIR = join(repoRoot, '..', 'shared', 'fixtures', 'real', 'trending-datasets');

export type Language = 'en' | 'fr' | 'ru' | 'ja';
export const LANGUAGES: Language[] = ['en', 'fr', 'ru', 'ja'];
/** Share of videos per language. */
const LANGUAGE_MIX: Record<Language, number> = { en: 0.55, fr: 0.2, ru: 0.22, ja: 0.03 };
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
/** Batches are whole blocks, so a re-upload's link never crosses a batch. */
const REUPLOAD_BLOCK = 1_000;

export interface VideoRow {
  videoId: string;
  channelId: string;
  language: Language;
  title: string;
  description: string | null;
  tags: string[];
  durationSeconds: number | null;
  viewCount: number | null;
  uploadDate: string | null;
  status: 'live' | 'deleted' | 're-uploaded' | 'checking';
  statusReason: string | null;
  reuploadedAs: string | null;
  hasSubtitles: boolean;
  hasSummary: boolean;
  videoFileUrl: string | null;
}

export interface ChannelRow { channelId: string; title: string; language: Language; subscriberCount: number }

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

export interface Corpus {
  seed: number;
  videos: number;
  channels: number;
  /** Where the words came from. */
  vocabulary: { source: 'trending-datasets' | 'built-in'; files: string[]; words: Record<Language, number> };
  channel(index: number): ChannelRow;
  /** Video `index`; `seen` gets the token id of every word in it (repeats included). */
  video(index: number, seen?: (tokenId: number) => void): VideoRow;
  /** The token of an id given to `seen`. */
  token(id: number): string;
  tokenCount: number;
}

// ---------------------------------------------------------------------------------------------------
// Randomness: a 32-bit mix and a per-item generator, so item i never depends on items before it.

/** A bijection of 32-bit integers that spreads every bit over all others (lowbias32). */
function scramble(value: number): number {
  let x = value >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

const mix32 = (a: number, b: number) => scramble(Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35));
/** Keyed, still a bijection: ids built on it never collide within a seed. */
const permute32 = (value: number, key: number) => (scramble(value + key) ^ key) >>> 0;

const normal = (rnd: () => number) => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
const between = (rnd: () => number, min: number, max: number) => min + Math.floor(rnd() * (max - min + 1));

function zipfCdf(size: number, exponent: number, offset: number): Float64Array {
  const cdf = new Float64Array(size);
  let sum = 0;
  for (let rank = 0; rank < size; rank++) cdf[rank] = sum += (rank + 1 + offset) ** -exponent;
  return cdf;
}

function draw(cdf: Float64Array, rnd: () => number): number {
  const target = rnd() * cdf[cdf.length - 1]!;
  let low = 0;
  let high = cdf.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (cdf[middle]! < target) low = middle + 1;
    else high = middle;
  }
  return low;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const chars = (bits: number, count: number) => {
  let out = '';
  for (let i = 0; i < count; i++) out += ALPHABET[(bits >>> (6 * i)) & 63];
  return out;
};

/** 11 characters: a seed-keyed permutation of the index (unique within a seed) and hashed bits. */
export function corpusVideoId(seed: number, index: number): string {
  const unique = permute32(index, mix32(seed, 0x5eed));
  const hashed = mix32(seed, unique);
  const more = mix32(hashed, index);
  return chars(unique, 5) + ALPHABET[((unique >>> 30) | ((more & 15) << 2)) & 63] + chars(hashed, 5);
}

export function corpusChannelId(seed: number, index: number): string {
  const unique = permute32(index, mix32(seed, 0xc4a7));
  let id = `UC${chars(unique, 5)}`;
  for (let part = 1; id.length < 24; part++) id += chars(mix32(unique, part ^ seed), 5);
  return id.slice(0, 24);
}

// ---------------------------------------------------------------------------------------------------
// The vocabulary.

/** RFC 4180 with leniency: a quote inside a quoted field that does not end it is kept (the `"a"|"b"` tag lists). */
export function parseCsv(text: string): string[][] {
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

interface RawText { titles: string[]; descriptions: string[]; tags: string[][] }

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
    raw.tags.push(row[tags]!.split('|').map((tag) => tag.replaceAll('"', '').trim()).filter((tag) => tag.length >= 2 && tag.length <= 40 && tag !== '[none]'));
  }
  return raw;
}

const BUILT_IN: Record<Exclude<Language, 'ja'>, string> = {
  en: 'the of and to a in is you that it for on with this video my how new we be are your not at all from have what can official music one more live game best will do by top day about out get like full first life world 2024 episode part time make season news trailer vs review first love world how best cooking travel guide food car house funny challenge reaction tutorial highlights interview song remix cover football basketball minecraft fortnite family kids science history space space war truth story night city summer winter christmas',
  fr: 'de la le et les des en un une du pour est pas que sur dans qui au avec ce il vous je on plus nous sont par mais vidéo nouvelle officiel musique jeu meilleur jour tout fait faire premier monde vie amour histoire cuisine voyage recette voiture maison drôle défi réaction tutoriel football clip chanson épisode saison bande annonce français paris été hiver noël famille enfants science guerre vérité soirée ville',
  ru: 'и в не на я что с он как это по но все так из за вы у мы то же для от видео новый клип официальный музыка игра лучший день мир жизнь любовь история кухня путешествие рецепт машина дом смешной челлендж реакция обзор футбол песня серия сезон трейлер русский москва лето зима новый год семья дети наука война правда ночь город',
};
const CJK_WORDS = '東京 日本 動画 料理 猫 犬 旅行 音楽 ゲーム 実況 配信 映画 新作 公式 予告 最新 ニュース 北京 上海 中国 美食 教程 生活 日常 歌 カバー 踊って みた 初心者 解説 攻略 桜 夏 冬 祭り 夜景 電車 ラーメン 寿司 カレー 野球 サッカー 試合 ライブ 東京タワー 富士山 京都 大阪 韓国 아이돌 노래 먹방 여행'.split(' ');

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
  const tags = byCount(tagCounts).filter((tag) => tokenize(tag).length > 0).slice(0, MAX_TAGS_PER_LANGUAGE);
  return { language, words, wordIds, tags, tagIds: tags.map((tag) => Int32Array.from(tokenize(tag), (token) => table.id(token))), tagCdf: zipfCdf(tags.length, 1, ZIPF_OFFSET) };
}

const SYLLABLES: Record<Exclude<Language, 'ja'>, string[]> = {
  en: 'ba be bi bo bu da de di do du fa fe fi fo ga go ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po ra re ri ro ru sa se si so ta te ti to tu va vo za zo'.split(' '),
  fr: 'ba be bi bo da de di do fa fe fi fo ga gi go la le li lo lu ma me mi mo mu na ne ni no pa pe pi po ra re ri ro sa se si so ta te ti to va ve vi vo'.split(' '),
  ru: 'ба бе би бо бу ва ве ви во га го да де ди до ду за зи ка ке ки ко ку ла ле ли ло лу ма ме ми мо му на не ни но ну па пе пи по ра ре ри ро ру са се си со та те ти то ту'.split(' '),
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
    const raw: RawText = available ? readTrending(join(directory!, file)) : { titles: [builtIn.join(' ')], descriptions: [], tags: builtIn.map((word) => [word]) };
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

// ---------------------------------------------------------------------------------------------------
// The corpus.

const DELETE_REASONS: Array<[string, number]> = [['removed_by_uploader', 0.45], ['private', 0.25], ['terms_of_service', 0.1], ['copyright', 0.1], ['account_terminated', 0.07], ['blocked_in_region', 0.03]];
const FIRST_DAY = Date.UTC(2006, 0, 1) / 86_400_000;
const LAST_DAY = Date.UTC(2026, 5, 30) / 86_400_000;

export function createCorpus(options: { seed: number; videos: number; channels?: number; vocabularyDir?: string | null; vocabulary?: ReturnType<typeof loadVocabulary> }): Corpus {
  const { seed, videos } = options;
  const channels = Math.max(LANGUAGES.length, options.channels ?? Math.ceil(videos / 200));
  const vocabulary = options.vocabulary ?? loadVocabulary(options.vocabularyDir === undefined ? TRENDING_DIR : options.vocabularyDir);
  const { vocabularies, cjk, token } = vocabulary;

  // The first channels cover every language; the rest are drawn.
  const channelLanguage = (index: number): Language => {
    if (index < LANGUAGES.length) return LANGUAGES[index]!;
    let u = random(mix32(seed ^ 0xc0ffee, index))();
    for (const language of LANGUAGES) if ((u -= LANGUAGE_MIX[language]) < 0) return language;
    return 'en';
  };
  const channelsOf: Record<Language, number[]> = { en: [], fr: [], ru: [], ja: [] };
  for (let index = 0; index < channels; index++) channelsOf[channelLanguage(index)].push(index);
  const channelCdf = Object.fromEntries(LANGUAGES.map((language) => [language, zipfCdf(channelsOf[language].length, 1, 1)])) as Record<Language, Float64Array>;

  const noop = () => {};
  function word(language: Exclude<Language, 'ja'>, rnd: () => number, seen: (id: number) => void): string {
    const v = vocabularies[language];
    const rank = draw(v.cdf, rnd);
    if (rank < v.words.length) {
      seen(v.wordIds[rank]!);
      return v.words[rank]!;
    }
    const id = v.tailBase + rank - v.words.length;
    seen(id);
    return token(id);
  }
  function cjkWord(rnd: () => number, seen: (id: number) => void): string {
    const index = draw(cjk.cdf, rnd);
    for (const id of cjk.ids[index]!) seen(id);
    return cjk.words[index]!;
  }
  const words = (count: number, next: () => string) => Array.from({ length: count }, next);

  function sentences(count: number, next: () => string, rnd: () => number): string {
    let text = '';
    let inSentence = 0;
    for (let i = 0; i < count; i++) {
      const w = next();
      text += inSentence === 0 ? w[0]!.toUpperCase() + w.slice(1) : w;
      inSentence += 1;
      if (i === count - 1) text += '.';
      else if (inSentence >= 6 && rnd() < 0.15) {
        text += rnd() < 0.3 ? '.\n' : '. ';
        inSentence = 0;
      } else text += rnd() < 0.05 ? ', ' : ' ';
    }
    return text;
  }

  function video(index: number, seen: (id: number) => void = noop): VideoRow {
    const rnd = random(mix32(seed, index));
    let u = rnd();
    let language: Language = 'en';
    for (const candidate of LANGUAGES) if ((u -= LANGUAGE_MIX[candidate]) < 0) {
      language = candidate;
      break;
    }
    const channelIndex = channelsOf[language][draw(channelCdf[language], rnd)]!;
    const videoId = corpusVideoId(seed, index);

    let title: string;
    let description: string | null;
    let tags: string[];
    const descriptionWords = rnd() < 0.1 ? -1 : rnd() < 0.06 ? 0 : Math.min(150, Math.max(1, Math.round(Math.exp(3.5 + 0.9 * normal(rnd)))));
    const tagCount = rnd() < 0.25 ? 0 : between(rnd, 1, 10);
    if (language === 'ja') {
      title = words(between(rnd, 2, 5), () => cjkWord(rnd, seen)).join('') + (rnd() < 0.3 ? ` ${word('en', rnd, seen)}` : '');
      description = descriptionWords <= 0 ? (descriptionWords === 0 ? '' : null) : words(Math.ceil(descriptionWords / 4), () => cjkWord(rnd, seen)).join('、') + '。';
      tags = words(Math.min(tagCount, 4), () => cjkWord(rnd, seen));
    } else {
      const next = () => word(language as Exclude<Language, 'ja'>, rnd, seen);
      const titleWords = words(between(rnd, 2, 6) + between(rnd, 2, 6), next);
      title = titleWords.length > 5 && rnd() < 0.2 ? `${titleWords.slice(0, -2).join(' ')} - ${titleWords.slice(-2).join(' ')}` : titleWords.join(' ');
      description = descriptionWords <= 0 ? (descriptionWords === 0 ? '' : null) : sentences(descriptionWords, next, rnd);
      const v = vocabularies[language as Exclude<Language, 'ja'>];
      tags = [];
      for (let t = 0; t < tagCount; t++) {
        if (v.tags.length > 0 && rnd() < 0.85) {
          const tag = draw(v.tagCdf, rnd);
          if (tags.includes(v.tags[tag]!)) continue;
          for (const id of v.tagIds[tag]!) seen(id);
          tags.push(v.tags[tag]!);
        } else tags.push(next());
      }
    }

    u = rnd();
    // A re-upload's link points at an earlier video of its block of REUPLOAD_BLOCK, which is written in the same statement.
    const inBlock = index % REUPLOAD_BLOCK;
    const status: VideoRow['status'] = u < 0.92 ? 'live' : u < 0.97 || (u < 0.975 && inBlock === 0) ? 'deleted' : u < 0.975 ? 're-uploaded' : 'checking';
    let statusReason: string | null = null;
    if (status === 'deleted') {
      let r = rnd();
      statusReason = DELETE_REASONS.find(([, share]) => (r -= share) < 0)?.[0] ?? 'unknown';
    }
    if (status === 're-uploaded') statusReason = 'removed_by_uploader';
    const reuploadedAs = status === 're-uploaded' ? corpusVideoId(seed, index - 1 - Math.floor(rnd() * inBlock)) : null;
    const viewCount = rnd() < 0.01 ? null : Math.min(5e9, Math.floor(Math.exp(7 + 2.4 * normal(rnd))));
    const day = rnd() < 0.03 ? null : Math.floor(FIRST_DAY + (LAST_DAY - FIRST_DAY) * Math.sqrt(rnd()));
    u = rnd();
    const durationSeconds = u < 0.04 ? null : u < 0.16 ? between(rnd, 5, 60) : Math.min(43_200, Math.round(Math.exp(Math.log(480) + 0.9 * normal(rnd))));
    const hasVideo = rnd() < 0.1;
    return {
      videoId,
      channelId: corpusChannelId(seed, channelIndex),
      language,
      title,
      description,
      tags,
      durationSeconds,
      viewCount,
      uploadDate: day === null ? null : new Date(day * 86_400_000).toISOString().slice(0, 10),
      status,
      statusReason,
      reuploadedAs,
      hasSubtitles: rnd() < 0.4,
      hasSummary: rnd() < 0.03,
      videoFileUrl: hasVideo ? `file:///archive/${videoId}.mp4` : null,
    };
  }

  function channel(index: number): ChannelRow {
    const rnd = random(mix32(seed ^ 0xc4a77e1, index));
    const language = channelLanguage(index);
    const title = language === 'ja' ? words(2, () => cjkWord(rnd, noop)).join('') : words(between(rnd, 1, 3), () => word(language, rnd, noop)).join(' ');
    return { channelId: corpusChannelId(seed, index), title, language, subscriberCount: Math.floor(Math.exp(8 + 2.5 * normal(rnd))) };
  }

  return {
    seed,
    videos,
    channels,
    vocabulary: {
      source: vocabulary.source,
      files: vocabulary.files,
      words: { en: vocabularies.en.words.length, fr: vocabularies.fr.words.length, ru: vocabularies.ru.words.length, ja: cjk.words.length },
    },
    channel,
    video,
    token,
    tokenCount: vocabulary.tokenCount,
  };
}

// ---------------------------------------------------------------------------------------------------
// Word frequencies: in how many videos each token occurs.

export interface FrequencyTable { videos: number; counts: Int32Array; token(id: number): string }

/** Counts, per token, the videos it occurs in; `seen` is what to pass to corpus.video. */
export function frequencyCounter(corpus: Corpus) {
  const counts = new Int32Array(corpus.tokenCount);
  const last = new Int32Array(corpus.tokenCount).fill(-1);
  let videos = 0;
  let current = -1;
  return {
    /** Call before generating video `index`. */
    start(index: number) {
      current = index;
      videos += 1;
    },
    seen(id: number) {
      if (last[id] === current) return;
      last[id] = current;
      counts[id]! += 1;
    },
    table: (): FrequencyTable => ({ videos, counts, token: corpus.token }),
  };
}

/** Tokens occurring in between `min` and `max` videos, most frequent first (ties by token). */
export function wordsBetween(table: FrequencyTable, min: number, max: number): Array<{ word: string; videos: number }> {
  const found: Array<{ word: string; videos: number }> = [];
  for (let id = 0; id < table.counts.length; id++) {
    const n = table.counts[id]!;
    if (n >= min && n <= max) found.push({ word: table.token(id), videos: n });
  }
  return found.sort((a, b) => b.videos - a.videos || (a.word < b.word ? -1 : 1));
}

// ---------------------------------------------------------------------------------------------------
// Writing a corpus into the database.

const arrayLiteral = (items: string[]) => `{${items.map((item) => `"${item.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;

/** One batch as column arrays, for one INSERT … SELECT FROM unnest(…); flags as 't'/'f' text (postgres.js sends a boolean[] parameter wrong). */
function columns(rows: VideoRow[]) {
  const pick = <T>(f: (v: VideoRow) => T) => rows.map(f);
  return {
    id: pick((v) => v.videoId),
    channel: pick((v) => v.channelId),
    title: pick((v) => v.title),
    description: pick((v) => v.description),
    duration: pick((v) => v.durationSeconds),
    views: pick((v) => v.viewCount),
    date: pick((v) => v.uploadDate),
    file: pick((v) => v.videoFileUrl),
    tags: pick((v) => arrayLiteral(v.tags)),
    language: pick((v) => v.language),
    status: pick((v) => v.status),
    reason: pick((v) => v.statusReason),
    reupload: pick((v) => v.reuploadedAs),
    subtitles: pick((v) => (v.hasSubtitles ? 't' : 'f')),
    summary: pick((v) => (v.hasSummary ? 't' : 'f')),
  };
}

export interface WriteOptions {
  batch?: number;
  /** INSERT statements in flight at once (each a connection of the pool). */
  connections?: number;
  /** With a frequency counter, every video's words are counted as it is generated. */
  counter?: ReturnType<typeof frequencyCounter>;
  onProgress?: (written: number, total: number) => void;
}

export interface WriteResult {
  videos: number;
  channels: number;
  seconds: number;
  videosPerSecond: number;
  languages: Record<Language, number>;
  statuses: Record<VideoRow['status'], number>;
}

/**
 * Writes the corpus (channels, then videos in batches of one multi-row INSERT each) through every index
 * and trigger of the schema. The videos of a seed are written once: when its first video is already
 * stored, nothing is written and an Error says so.
 */
export async function writeCorpus(sql: Sql, corpus: Corpus, options: WriteOptions = {}): Promise<WriteResult> {
  const batch = Math.max(1, Math.round((options.batch ?? 5_000) / REUPLOAD_BLOCK)) * REUPLOAD_BLOCK;
  const connections = options.connections ?? 2;
  const [clash] = await sql<{ videoId: string }[]>`
    select video_id as "videoId" from videos where video_id = any(${[corpusVideoId(corpus.seed, 0), corpusVideoId(corpus.seed, corpus.videos - 1)]}) limit 1`;
  if (clash) throw new AppError('INVALID_INPUT', `the corpus of seed ${corpus.seed} is already stored (video ${clash.videoId}); generate with another --seed for more videos`);
  const started = performance.now();
  const channelRows = Array.from({ length: corpus.channels }, (_, index) => corpus.channel(index));
  await sql`
    insert into channels (channel_id, title, subscriber_count, country)
    select * from unnest(${channelRows.map((c) => c.channelId)}::text[], ${channelRows.map((c) => c.title)}::text[],
      ${channelRows.map((c) => c.subscriberCount)}::bigint[], ${channelRows.map((c) => c.language.toUpperCase())}::text[])
    on conflict (channel_id) do nothing`;

  const languages: Record<Language, number> = { en: 0, fr: 0, ru: 0, ja: 0 };
  const statuses: Record<VideoRow['status'], number> = { live: 0, deleted: 0, 're-uploaded': 0, checking: 0 };
  const counter = options.counter;
  const seen = counter ? (id: number) => counter.seen(id) : undefined;
  let nextBatch = 0;
  let written = 0;
  const batches = Math.ceil(corpus.videos / batch);
  async function writer() {
    for (let b = nextBatch++; b < batches; b = nextBatch++) {
      const from = b * batch;
      const rows: VideoRow[] = [];
      for (let index = from; index < Math.min(corpus.videos, from + batch); index++) {
        counter?.start(index);
        const row = corpus.video(index, seen);
        languages[row.language] += 1;
        statuses[row.status] += 1;
        rows.push(row);
      }
      const c = columns(rows);
      await sql`
        insert into videos (video_id, channel_id, title, description, duration_seconds, view_count, upload_date, thumbnail_url, video_file_url, tags,
          language, status, status_reason, status_source, reuploaded_as, has_subtitles, has_summary, metadata_rank)
        select id, channel, title, description, duration, views, date, 'https://i.ytimg.com/vi/' || id || '/hqdefault.jpg', file, tags::text[],
          language, status, reason, 'youtube_api', reupload, subtitles = 't', summary = 't', 3
        from unnest(${c.id}::text[], ${c.channel}::text[], ${c.title}::text[], ${c.description}::text[], ${c.duration}::int[], ${c.views}::bigint[],
          ${c.date}::date[], ${c.file}::text[], ${c.tags}::text[], ${c.language}::text[], ${c.status}::text[], ${c.reason}::text[],
          ${c.reupload}::text[], ${c.subtitles}::text[], ${c.summary}::text[])
          as x(id, channel, title, description, duration, views, date, file, tags, language, status, reason, reupload, subtitles, summary)`;
      written += rows.length;
      options.onProgress?.(written, corpus.videos);
    }
  }
  await Promise.all(Array.from({ length: Math.min(connections, batches) }, writer));
  const seconds = (performance.now() - started) / 1000;
  return { videos: written, channels: corpus.channels, seconds, videosPerSecond: written / seconds, languages, statuses };
}

// ---------------------------------------------------------------------------------------------------
// The benchmark's query mix.

export const QUERY_CLASSES = ['rare', 'common', 'phrase', 'or', 'exclusion'] as const;
export type QueryClass = (typeof QUERY_CLASSES)[number];

/** Filter combinations the "with filters" runs rotate through. */
export const FILTER_SETS: FtsFilters[] = [
  { status: 'live', hasSubtitles: true },
  { hasVideo: true },
  { status: 'deleted' },
  { status: 'live', hasSummary: true },
];

export interface QueryMix {
  queries: Record<QueryClass, string[]>;
  /** The video-count bounds that made a word rare, mid-frequency or common in this corpus. */
  bounds: { rareMax: number; midMin: number; midMax: number; commonMin: number };
  /** Common words and the share of videos they occur in. */
  common: Array<{ word: string; share: number }>;
}

/**
 * Six queries per class, from the corpus's own frequencies: rare words (in at most 0.001 % of videos),
 * very common ones (in ≥ 30 %), phrases taken from generated titles, OR of two or three words, and
 * exclusions of common words or phrases.
 */
export function queryMix(corpus: Corpus, table: FrequencyTable, perClass = 6): QueryMix {
  const n = table.videos;
  const bounds = { rareMax: Math.max(3, Math.ceil(n * 1e-5)), midMin: Math.ceil(n * 0.001), midMax: Math.ceil(n * 0.02), commonMin: Math.ceil(n * 0.3) };
  const rnd = random(mix32(corpus.seed, 0x9e7));
  const pick = <T>(list: T[], count: number) => {
    const chosen: T[] = [];
    const pool = [...list];
    while (chosen.length < count && pool.length) chosen.push(pool.splice(Math.floor(rnd() * pool.length), 1)[0]!);
    return chosen;
  };
  const latin = (word: string) => /^[\p{Script=Latin}\p{Script=Cyrillic}]{3,}$/u.test(word);
  const rare = wordsBetween(table, 1, bounds.rareMax).map((w) => w.word);
  const mid = wordsBetween(table, bounds.midMin, bounds.midMax).filter((w) => latin(w.word)).map((w) => w.word);
  let common = wordsBetween(table, bounds.commonMin, n);
  if (common.length < 2) common = wordsBetween(table, 1, n).slice(0, 4);
  const commonWords = common.map((w) => w.word);
  const c = (i: number) => commonWords[i % commonWords.length]!;
  const m = pick(mid, 12);
  const r = pick(rare, perClass + 3);
  const midWord = (i: number) => m[i % Math.max(1, m.length)] ?? c(i + 1);

  // Adjacent title words, both frequent (in ≥ 1 % of videos) or the second mid-frequency, as a phrase.
  const frequent = new Set(wordsBetween(table, Math.ceil(n * 0.01), n).map((w) => w.word));
  const midSet = new Set(mid);
  const phrases: string[] = [];
  const wanted = [(a: string, b: string) => frequent.has(a) && frequent.has(b), (a: string, b: string) => frequent.has(a) && midSet.has(b)];
  for (let probe = 0; phrases.length < perClass - 1 && probe < 20_000; probe++) {
    const tokens = tokenize(corpus.video(Math.floor(rnd() * n)).title);
    const test = wanted[phrases.length % 2]!;
    for (let i = 0; i + 1 < tokens.length; i++) {
      const phrase = `"${tokens[i]} ${tokens[i + 1]}"`;
      if (!isCjkToken(tokens[i]!) && test(tokens[i]!, tokens[i + 1]!) && tokens[i] !== tokens[i + 1] && !phrases.includes(phrase)) {
        phrases.push(phrase);
        break;
      }
    }
  }
  // A phrase of CJK characters from a Japanese title, when the corpus has one.
  for (let probe = 0; probe < 2_000 && phrases.length < perClass; probe++) {
    const tokens = tokenize(corpus.video(Math.floor(rnd() * n)).title).filter(isCjkToken);
    if (tokens.length >= 2) phrases.push(`"${tokens.slice(0, 2).join('')}"`);
  }

  const queries: Record<QueryClass, string[]> = {
    rare: r.slice(0, perClass),
    common: Array.from({ length: perClass }, (_, i) => (i < commonWords.length ? c(i) : `${c(i)} ${c(i + 1)}`)),
    phrase: phrases,
    or: [
      `${midWord(0)} OR ${midWord(1)}`,
      `${midWord(2)} OR ${midWord(3)}`,
      `${midWord(4)} OR ${midWord(5)} OR ${midWord(6)}`,
      `${c(0)} OR ${midWord(7)}`,
      `${c(1)} OR ${c(2)}`,
      `${r[perClass] ?? midWord(8)} OR ${r[perClass + 1] ?? midWord(9)} OR ${r[perClass + 2] ?? midWord(10)}`,
    ].slice(0, perClass),
    exclusion: [
      `${c(0)} -${c(1)}`,
      `${c(1)} -${c(2)}`,
      `${midWord(8)} -${c(0)}`,
      `${midWord(9)} -${c(2)}`,
      `${c(0)} -${phrases[0] ?? c(3)}`,
      `${c(2)} ${midWord(10)} -${midWord(11)}`,
    ].slice(0, perClass),
  };
  return { queries, bounds, common: common.slice(0, 10).map((w) => ({ word: w.word, share: Math.round((w.videos / n) * 1000) / 1000 })) };
}
