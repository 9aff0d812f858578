/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replaceAll(' ', '-');

/** The anchors of every heading of a Markdown text. */
export const headingAnchors = (markdown: string) => new Set([...markdown.matchAll(/^#+ (.*)$/gm)].map((match) => anchor(match[1]!)));
