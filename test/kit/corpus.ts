/**
 * A deterministic synthetic archive for tests and benchmarks: channels and videos whose words come from
 * the vocabulary (corpus-vocabulary.ts), drawn with Zipf-like frequencies. Video i of a seed is the same
 * whatever the corpus size or batch order. Writing it: corpus-write.ts; the full-text query mix: corpus-queries.ts.
 */
import { LANGUAGES, loadVocabulary, TRENDING_DIR, type Language } from './corpus-vocabulary.ts';
import { between, draw, mix32, normal, permute32, random, zipfCdf } from './random.ts';

/** Share of videos per language. */
const LANGUAGE_MIX: Record<Language, number> = { en: 0.55, fr: 0.2, ru: 0.22, ja: 0.03 };
/** Batches are whole blocks, so a re-upload's link never crosses a batch. */
export const REUPLOAD_BLOCK = 1_000;

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

interface ChannelRow {
  channelId: string;
  title: string;
  language: Language;
  subscriberCount: number;
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
  /** One word of `language` drawn as titles and descriptions draw theirs (a CJK word for ja); `seen` gets its token ids. */
  word(language: Language, rnd: () => number, seen?: (tokenId: number) => void): string;
  /** The token of an id given to `seen`. */
  token(id: number): string;
  tokenCount: number;
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

function corpusChannelId(seed: number, index: number): string {
  const unique = permute32(index, mix32(seed, 0xc4a7));
  let id = `UC${chars(unique, 5)}`;
  for (let part = 1; id.length < 24; part++) id += chars(mix32(unique, part ^ seed), 5);
  return id.slice(0, 24);
}

const DELETE_REASONS: Array<[string, number]> = [
  ['removed_by_uploader', 0.45],
  ['private', 0.25],
  ['terms_of_service', 0.1],
  ['copyright', 0.1],
  ['account_terminated', 0.07],
  ['blocked_in_region', 0.03],
];
const FIRST_DAY = Date.UTC(2006, 0, 1) / 86_400_000;
const LAST_DAY = Date.UTC(2026, 5, 30) / 86_400_000;

type Vocabulary = ReturnType<typeof loadVocabulary>;
type Seen = (tokenId: number) => void;
const noop: Seen = () => {};

/** Words drawn by frequency rank; `seen` gets the token id of each. */
function wordDrawers({ vocabularies, cjk, token }: Vocabulary) {
  function word(language: Exclude<Language, 'ja'>, rnd: () => number, seen: Seen): string {
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
  function cjkWord(rnd: () => number, seen: Seen): string {
    const index = draw(cjk.cdf, rnd);
    for (const id of cjk.ids[index]!) seen(id);
    return cjk.words[index]!;
  }
  return { word, cjkWord };
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

export function createCorpus(options: {
  seed: number;
  videos: number;
  channels?: number;
  vocabularyDir?: string | null;
  vocabulary?: Vocabulary;
}): Corpus {
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
  const channelCdf = Object.fromEntries(LANGUAGES.map((language) => [language, zipfCdf(channelsOf[language].length, 1, 1)])) as Record<
    Language,
    Float64Array
  >;

  const { word, cjkWord } = wordDrawers(vocabulary);

  function video(index: number, seen: Seen = noop): VideoRow {
    const rnd = random(mix32(seed, index));
    let u = rnd();
    let language: Language = 'en';
    for (const candidate of LANGUAGES)
      if ((u -= LANGUAGE_MIX[candidate]) < 0) {
        language = candidate;
        break;
      }
    const channelIndex = channelsOf[language][draw(channelCdf[language], rnd)]!;
    const videoId = corpusVideoId(seed, index);

    let title: string;
    let description: string | null;
    let tags: string[];
    const descriptionWords =
      rnd() < 0.1 ? -1 : rnd() < 0.06 ? 0 : Math.min(150, Math.max(1, Math.round(Math.exp(3.5 + 0.9 * normal(rnd)))));
    const tagCount = rnd() < 0.25 ? 0 : between(rnd, 1, 10);
    if (language === 'ja') {
      title = words(between(rnd, 2, 5), () => cjkWord(rnd, seen)).join('') + (rnd() < 0.3 ? ` ${word('en', rnd, seen)}` : '');
      description =
        descriptionWords <= 0
          ? descriptionWords === 0
            ? ''
            : null
          : words(Math.ceil(descriptionWords / 4), () => cjkWord(rnd, seen)).join('、') + '。';
      tags = words(Math.min(tagCount, 4), () => cjkWord(rnd, seen));
    } else {
      const next = () => word(language as Exclude<Language, 'ja'>, rnd, seen);
      const titleWords = words(between(rnd, 2, 6) + between(rnd, 2, 6), next);
      title =
        titleWords.length > 5 && rnd() < 0.2
          ? `${titleWords.slice(0, -2).join(' ')} - ${titleWords.slice(-2).join(' ')}`
          : titleWords.join(' ');
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
    const status: VideoRow['status'] =
      u < 0.92 ? 'live' : u < 0.97 || (u < 0.975 && inBlock === 0) ? 'deleted' : u < 0.975 ? 're-uploaded' : 'checking';
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
    const durationSeconds =
      u < 0.04 ? null : u < 0.16 ? between(rnd, 5, 60) : Math.min(43_200, Math.round(Math.exp(Math.log(480) + 0.9 * normal(rnd))));
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
    const title =
      language === 'ja'
        ? words(2, () => cjkWord(rnd, noop)).join('')
        : words(between(rnd, 1, 3), () => word(language, rnd, noop)).join(' ');
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
    word: (language, rnd, seen = noop) => (language === 'ja' ? cjkWord(rnd, seen) : word(language, rnd, seen)),
    token,
    tokenCount: vocabulary.tokenCount,
  };
}
