import type { Page } from '../page.tsx';
import { homePage } from './home.tsx';

/** Every page of the web app, in the order they are matched (fixed words before `:params`). */
export const allPages: Page[] = [homePage];
