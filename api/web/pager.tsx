import type { VNode } from 'preact';

/** Previous and next links of a paged list (nothing when it fits on one page). */
export function Pager({
  page,
  totalPages,
  href,
  label,
}: {
  page: number;
  totalPages: number;
  href: (page: number) => string;
  label: string;
}): VNode | null {
  if (totalPages <= 1) return null;
  return (
    <nav class="pager" aria-label={label}>
      {page > 1 ? (
        <a href={href(page - 1)} rel="prev">
          ← Previous
        </a>
      ) : (
        <span />
      )}
      <span>
        Page {page.toLocaleString('en')} of {totalPages.toLocaleString('en')}
      </span>
      {page < totalPages ? (
        <a href={href(page + 1)} rel="next">
          Next →
        </a>
      ) : (
        <span />
      )}
    </nav>
  );
}
