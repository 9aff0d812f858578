import type { ComponentChildren, VNode } from 'preact';
import { assetUrl } from './assets.ts';

/** A signed-in visitor, as the header shows them. */
export interface Account {
  email: string;
  isAdmin: boolean;
}

export interface LayoutProps {
  title: string;
  /** Who is signed in; absent for an anonymous visitor. */
  account?: Account | undefined;
  children: ComponentChildren;
  /** The page's meta description (search results, link previews). */
  description?: string | undefined;
  /** More of `<head>`: canonical link, Open Graph tags, JSON-LD. */
  head?: ComponentChildren;
  /** Stylesheets of api/web/assets/ this page needs beyond site.css. */
  styles?: string[] | undefined;
  /** Files of api/web/assets/ this page needs beyond site.js, loaded as deferred modules. */
  scripts?: string[] | undefined;
  /** False on a page with a search form of its own (home, search): one box on a phone's first screen, not two. */
  headerSearch?: boolean | undefined;
  /** The document's language (a summary page in its own language). */
  lang?: string | undefined;
}

function SignedIn({ account }: { account: Account | undefined }): VNode {
  if (!account) return <a href="/login">Sign in</a>;
  return (
    <>
      <a href="/watchlists">Watchlists</a>
      <a href="/account">{account.email}</a>
    </>
  );
}

/** Every page's frame: a skip link, the header with the search box and navigation, the page, the footer. */
export function Layout(props: LayoutProps): VNode {
  return (
    <html lang={props.lang ?? 'en'}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Afterimage`}</title>
        {props.description ? <meta name="description" content={props.description} /> : null}
        <link rel="icon" href={assetUrl('favicon.svg')} type="image/svg+xml" />
        <link rel="stylesheet" href={assetUrl('site.css')} />
        {(props.styles ?? []).map((name) => (
          <link key={name} rel="stylesheet" href={assetUrl(name)} />
        ))}
        <script type="module" src={assetUrl('site.js')} />
        {(props.scripts ?? []).map((name) => (
          <script key={name} type="module" src={assetUrl(name)} />
        ))}
        {props.head}
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="site">
          <a class="brand" href="/">
            Afterimage
          </a>
          {props.headerSearch === false ? null : (
            <form class="search" role="search" method="get" action="/search">
              <label for="site-q" class="visually-hidden">
                Search channels, videos, titles and subtitles
              </label>
              <input id="site-q" name="q" type="search" placeholder="Channel, video or words" autoComplete="off" />
              <button type="submit">Search</button>
            </form>
          )}
          <nav aria-label="Site">
            <a href="/summaries">Summaries</a>
            <a href="/api/docs">API</a>
            <SignedIn account={props.account} />
          </nav>
        </header>
        <main id="main">{props.children}</main>
        <footer class="site">
          <p>
            Afterimage keeps the metadata of YouTube videos, deleted ones included. <a href="/api/docs">API reference</a> ·{' '}
            <a href="/api/openapi.json">OpenAPI</a>
          </p>
        </footer>
      </body>
    </html>
  );
}
