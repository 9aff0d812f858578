import type { Page } from '../page.tsx';
import { homePage } from './home.tsx';
import { searchPage } from './search.tsx';
import { summariesPage } from './summaries.tsx';
import { summaryPage } from './summary.tsx';

/** Every page of the web app, in the order they are matched (fixed words before `:params`). */
export const allPages: Page[] = [homePage, searchPage, summariesPage, summaryPage];
