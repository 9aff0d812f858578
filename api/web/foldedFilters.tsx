import type { ComponentChildren, VNode } from 'preact';

/**
 * A page's filters, folded away on a phone so its first screen shows results: a <details> closed in
 * the HTML that site.css shows open on wider screens, without JavaScript (site.js sets `open` there
 * too, so a screen reader hears them expanded). `open` unfolds them everywhere (a form with no results yet).
 */
export function FoldedFilters({ label, open, children }: { label: string; open?: boolean; children: ComponentChildren }): VNode {
  return (
    <details class="fold" open={open}>
      <summary>{label}</summary>
      {children}
    </details>
  );
}
