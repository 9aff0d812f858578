import type { VNode } from 'preact';
import type { SummaryListItem } from '../../core/summaries/summaryObject.ts';

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });
/** A language code as a person reads it: en → English (the code itself when unknown). */
export function languageName(code: string | null): string {
  if (!code) return 'unknown language';
  try {
    return languageNames.of(code) ?? code;
  } catch {
    return code;
  }
}

/** A list of public summaries: each links to its page, its channel's and its tags' lists. */
export function SummaryCards({ items }: { items: SummaryListItem[] }): VNode {
  return (
    <ol class="cards summaries">
      {items.map((item) => (
        <li key={item.videoId} class="card">
          <h3>
            <a href={`/summaries/${item.videoId}`}>{item.title ?? item.videoTitle ?? item.videoId}</a>
          </h3>
          <p class="meta muted">
            {item.videoTitle && item.videoTitle !== item.title ? <span>{item.videoTitle}</span> : null}
            <a href={`/summaries?channelId=${item.channelId}`}>{item.channelTitle ?? item.channelId}</a>
            <span lang="en">{languageName(item.language)}</span>
            {item.generatedAt ? <time dateTime={item.generatedAt}>{item.generatedAt.slice(0, 10)}</time> : null}
          </p>
          {item.tldr ? <p lang={item.language ?? undefined}>{item.tldr}</p> : null}
          {item.tags.length ? (
            <p class="tags">
              {item.tags.map((tag) => (
                <a href={`/summaries?tag=${encodeURIComponent(tag)}`}>#{tag}</a>
              ))}
            </p>
          ) : null}
        </li>
      ))}
    </ol>
  );
}
